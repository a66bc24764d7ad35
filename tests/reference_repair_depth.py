"""Independent brute-force reference for depth with repair (SPEC §1 depth, §10.5), small N only.

Nothing here imports spare_jax. d*(down set) comes from Hall's condition checked over *every* subset of
shards (bitmasks, N <= 12): depth d is feasible iff every shard set X has d * |alive holders of X| >= |X|.
The epoch is a plain event walk (NumPy generator): every up group fails after an exponential time, a failed
group is down for a repair time (fixed or exponential) and rejoins; the epoch ends at the first failure after
which some shard has all its holders down. Useful work accrues at rate 1/d*(down set) between events.

``simulate_training_runs`` assembles training runs exactly on that path: within an epoch, checkpoints of
cost C follow every tau minutes of compute (period P = tau + C from the restart), the work done in the
compute phases is committed at each checkpoint's completion, a wipe-out loses everything after the last
completed checkpoint and costs a restart R; the run ends at the checkpoint completion at which the committed
work reaches W (a depth-1 work unit is one minute).
"""

from __future__ import annotations

import math

import numpy as np


def holders_of(n, r, placement="stacked"):
    """list of shards -> list of holder groups."""
    if placement == "stacked":
        return [[(j - l) % n for l in range(r)] for j in range(n)]
    if placement == "block":
        return [[(j // r) * r + i for i in range(r)] for j in range(n)]
    raise ValueError(placement)


class HallDepth:
    """d*(down mask) by Hall's condition over all 2^N shard subsets (cached per down mask)."""

    def __init__(self, n, r, placement="stacked"):
        assert n <= 12
        self.n, self.r = n, r
        hold = holders_of(n, r, placement)
        hmask = np.array([sum(1 << g for g in h) for h in hold], dtype=np.int64)
        subsets = np.arange(1, 1 << n, dtype=np.int64)
        nb = np.zeros(subsets.size, dtype=np.int64)
        size = np.zeros(subsets.size, dtype=np.int64)
        for j in range(n):
            has = (subsets >> j) & 1 == 1
            nb[has] |= hmask[j]
            size += has
        self.nb, self.size = nb, size
        self.cache = {}

    def __call__(self, down_mask: int) -> int:
        d = self.cache.get(down_mask)
        if d is None:
            alive_mask = ((1 << self.n) - 1) & ~down_mask
            x = self.nb & alive_mask
            cnt = np.zeros(x.size, dtype=np.int64)
            for g in range(self.n):
                cnt += (x >> g) & 1
            d = 0  # 0: a shard is lost
            if np.all(cnt[self.size == 1] > 0):
                for k in range(1, self.r + 1):
                    if np.all(k * cnt >= self.size):
                        d = k
                        break
            self.cache[down_mask] = d
        return d


def _repair_draw(rng, law, mean):
    return mean if law == "fixed" else rng.exponential(mean)


def epoch_path(rng, n, r, hall, mtbf, repair_mean, law, holders):
    """One epoch: list of (t_start, t_end, depth) segments and the wipe-out time."""
    t_next = rng.exponential(mtbf, n)  # next failure (up) or rejoin (down)
    down = np.zeros(n, bool)
    mask, t, d = 0, 0.0, 1
    segs = []
    while True:
        g = int(np.argmin(t_next))
        te = float(t_next[g])
        segs.append((t, te, d))
        t = te
        if down[g]:
            down[g] = False
            mask &= ~(1 << g)
            t_next[g] = t + rng.exponential(mtbf)
        else:
            down[g] = True
            mask |= 1 << g
            if any(all(down[h] for h in hs) for hs in holders):
                return segs, t
            t_next[g] = t + _repair_draw(rng, law, repair_mean)
        d = hall(mask)
        assert d > 0


def simulate_depth_epochs(n, r, epochs, seed, mtbf=100.0, repair_mean=30.0, law="exp", placement="stacked"):
    """Per epoch: uptime U, work W = int 1/d, and int d (arrays)."""
    rng = np.random.default_rng(seed)
    hall = HallDepth(n, r, placement)
    holders = holders_of(n, r, placement)
    out = np.zeros((epochs, 3))
    for e in range(epochs):
        segs, u = epoch_path(rng, n, r, hall, mtbf, repair_mean, law, holders)
        s = np.array(segs)
        dt = s[:, 1] - s[:, 0]
        out[e] = (u, np.sum(dt / s[:, 2]), np.sum(dt * s[:, 2]))
    return out[:, 0], out[:, 1], out[:, 2]


def _phi(t, tau, period):
    q = math.floor(t / period)
    return q * tau + min(t - q * period, tau)


def simulate_training_runs(n, r, runs, seed, tau, ckpt, restart, work, mtbf=100.0, repair_mean=30.0,
                           law="exp", placement="stacked"):
    """Wall-clock time of ``runs`` independent training runs (minutes), each from a fresh restart."""
    rng = np.random.default_rng(seed)
    hall = HallDepth(n, r, placement)
    holders = holders_of(n, r, placement)
    period = tau + ckpt
    walls = np.zeros(runs)
    for i in range(runs):
        committed, wall = 0.0, 0.0
        while True:
            segs, u = epoch_path(rng, n, r, hall, mtbf, repair_mean, law, holders)
            # committed work at each checkpoint completion k P <= u
            k_max = int(math.floor(u / period))
            done = None
            k = 1

            def work_by(cut):  # compute-phase work in [0, cut], integrated per depth segment
                y = 0.0
                for (a, b, d) in segs:
                    if a >= cut:
                        break
                    y += (_phi(min(b, cut), tau, period) - _phi(a, tau, period)) / d
                return y

            # walk the checkpoint completions in order
            while k <= k_max:
                cut = k * period
                y = work_by(cut)
                if committed + y >= work - 1e-9:
                    done = cut
                    break
                k += 1
            if done is not None:
                wall += done
                break
            if k_max > 0:
                committed += work_by(k_max * period)
            wall += u + restart
        walls[i] = wall
    return walls
