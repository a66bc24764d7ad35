r"""Scenarios beyond the paper's model: real clusters (docs/scenarios.md#real-clusters-scenarios).

A :class:`Scenario` describes how a real cluster departs from the paper's i.i.d. model
(docs/model.md#failures-wipe-out-depth-overhead). It composes like ``optax.chain``: independent parts, each validated
on its own with defaults that are *off*; a part that is off is static configuration and costs the kernels nothing (the
default ``Scenario()`` runs the base model's kernels unchanged, so every number of the base model is reproduced bit
for bit).

Parts
-----
Job-wide failures
    A Poisson process of interruptions that no redundancy masks (software bugs, hangs, host maintenance,
    silent data corruption), mean time ``job_mtbf_min``; its first event ends the epoch like a wipe-out.
    Alternatively ``job_fraction = f``: that fraction of all interruptions is job-wide, i.e. the job-wide rate
    is ``mu = f / (1 - f) * Lambda`` with ``Lambda`` the cluster's total rate of group and domain events at full
    health (``sum_g lambda_g + sum_domains 1/M``).
Failure domains
    Levels of domains (e.g. switch, power row), each ``DomainLevel(size, mtbf_min)``. At a level of size G,
    domain j holds the *physical* groups ``jG .. min((j+1)G, N) - 1`` and has an exponential clock with mean
    ``mtbf_min``. A domain event fails all its groups still up, as one event. Group g fails at the minimum of
    its own clock and the clocks of its domains.
Ring order
    The stacked placement runs over a *ring order* of the physical groups: ring position i holds physical
    group ``ring[i]``. ``contiguous``: ``ring[i] = i``. ``interleaved`` (over the level with the largest domains,
    ``D = ceil(N/G)`` domains): ``ring[i] = (i mod D) G + (i div D)`` over ``i = 0 .. DG - 1``, skipping ids
    ``>= N``; so r consecutive ring positions sit in r different domains when ``D >= r``. Or an explicit
    permutation (a ring file: one physical id per line, in ring order).
Uneven groups
    Per-group rate multipliers: a lemon fraction ``q`` failing ``lemon_factor`` times as often as the others
    (the lemons are ``round(qN)`` physical groups drawn once from ``lemon_seed``: the same groups stay lemons
    across restarts and trials), or explicit per-group MTBFs in minutes (``group_mtbf_min``, e.g. read from a
    file). Normal groups keep the model's group MTBF: lemons *add* failures, they do not redistribute them.

Micro-batches
    ``microbatches = m``: each shard is m micro-batches that any alive holder may compute; the depth is
    ``c*/m`` with c* the least per-group load in micro-batches (``spare_jax.kernels.depth``). It is a scheduling
    choice, not a failure part: ``is_default`` and ``needs_kernel`` ignore it (the base model's kernels and closed
    forms take m as a static argument), and m = 1 is the paper exactly.

Sources for presets are in :mod:`spare_jax.model.presets`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .coverage import COVERED, Coverage
from .failures import check_positive

RINGS = ("contiguous", "interleaved")
MAX_MICROBATCHES = 1024  # capacities r m stay far inside int32 and the level tables stay small


@dataclasses.dataclass(frozen=True)
class DomainLevel:
    """One level of failure domains: ``size`` physical groups per domain, one clock of mean ``mtbf_min``."""

    size: int
    mtbf_min: float
    name: str = ""

    def __post_init__(self):
        if isinstance(self.size, bool) or not isinstance(self.size, (int, np.integer)) or int(self.size) < 1:
            raise ValueError(f"domain size must be an integer >= 1, got {self.size!r}")
        object.__setattr__(self, "size", int(self.size))
        object.__setattr__(self, "mtbf_min", check_positive("domain mtbf (minutes)", self.mtbf_min))

    def count(self, groups: int) -> int:
        """Domains at this level for ``groups`` groups (the last may be short)."""
        return -(-groups // self.size)

    def members(self, groups: int) -> np.ndarray:
        """``int32[N]``: the domain of each physical group."""
        return (np.arange(groups) // self.size).astype(np.int32)


@dataclasses.dataclass(frozen=True)
class Scenario:
    """Everything about a real cluster that the paper's model idealises away. The default is that
    model exactly.

    Attributes:
      job_mtbf_min: mean time between job-wide interruptions, minutes (None: off).
      job_fraction: alternatively, the fraction of all interruptions that is job-wide, in [0, 1).
      domains: failure-domain levels.
      ring: ``contiguous``, ``interleaved`` or an explicit ring order (tuple of physical ids).
      lemon_fraction: fraction q of groups that are lemons, in [0, 1].
      lemon_factor: how many times as often a lemon fails (>= 1 typically; any positive value accepted).
      lemon_seed: which groups are lemons (drawn once, fixed across restarts).
      group_mtbf_min: explicit per-group MTBFs in minutes (overrides the model's group MTBF and lemons).
      microbatches: micro-batches per shard, m >= 1 (docs/microbatches.md#how-it-works; 1 = whole shards, the paper).
    """

    job_mtbf_min: float | None = None
    job_fraction: float | None = None
    domains: tuple[DomainLevel, ...] = ()
    ring: str | tuple[int, ...] = "contiguous"
    lemon_fraction: float = 0.0
    lemon_factor: float = 1.0
    lemon_seed: int = 0
    group_mtbf_min: tuple[float, ...] | None = None
    microbatches: int = 1

    def __post_init__(self):
        if self.job_mtbf_min is not None:
            object.__setattr__(self, "job_mtbf_min", check_positive("job_mtbf (minutes)", self.job_mtbf_min))
        if self.job_fraction is not None:
            f = self.job_fraction
            if isinstance(f, bool) or not isinstance(f, (int, float)) or not math.isfinite(f) or not 0 <= f < 1:
                raise ValueError(f"job_fraction must be a number in [0, 1), got {f!r}")
            if self.job_mtbf_min is not None:
                raise ValueError("give either job_mtbf or job_fraction, not both")
            object.__setattr__(self, "job_fraction", float(f))
        domains = tuple(d if isinstance(d, DomainLevel) else DomainLevel(*d) for d in self.domains)
        object.__setattr__(self, "domains", domains)
        if isinstance(self.ring, str):
            if self.ring not in RINGS:
                raise ValueError(f"ring must be one of {', '.join(RINGS)} or a permutation of the group ids, "
                                 f"got {self.ring!r}")
        else:
            object.__setattr__(self, "ring", tuple(int(g) for g in self.ring))
        q = self.lemon_fraction
        if isinstance(q, bool) or not isinstance(q, (int, float)) or not math.isfinite(q) or not 0 <= q <= 1:
            raise ValueError(f"lemon_fraction must be a number in [0, 1], got {q!r}")
        object.__setattr__(self, "lemon_fraction", float(q))
        object.__setattr__(self, "lemon_factor", check_positive("lemon_factor", self.lemon_factor))
        if isinstance(self.lemon_seed, bool) or not isinstance(self.lemon_seed, (int, np.integer)) \
                or not 0 <= int(self.lemon_seed) < 2**63:
            raise ValueError(f"lemon_seed must be an integer in [0, 2^63), got {self.lemon_seed!r}")
        mb = self.microbatches
        if isinstance(mb, bool) or not isinstance(mb, (int, np.integer)) or not 1 <= int(mb) <= MAX_MICROBATCHES:
            raise ValueError(f"microbatches must be an integer in [1, {MAX_MICROBATCHES}], got {mb!r}")
        object.__setattr__(self, "microbatches", int(mb))
        if self.group_mtbf_min is not None:
            object.__setattr__(self, "group_mtbf_min",
                               tuple(check_positive("group mtbf (minutes)", v) for v in self.group_mtbf_min))

    # -- what is on ---------------------------------------------------------------------------------------
    @property
    def is_default(self) -> bool:
        """True when the scenario is the paper's model (every part off)."""
        return (self.job_mtbf_min is None and not self.job_fraction and not self.domains
                and self.ring == "contiguous" and not self.uneven)

    @property
    def iid(self) -> bool:
        """True when the groups fail alike and independently (no domains, groups alike): the i.i.d. theory of
        wipe-outs holds (a ring order changes nothing there; job-wide failures compose with it)."""
        return not self.domains and not self.uneven

    @property
    def needs_kernel(self) -> bool:
        """True when a part beyond job-wide failures is on (domains, a ring order other than contiguous,
        uneven groups): no closed form, the scenario kernels simulate it. Job-wide failures alone compose
        exactly with the closed forms."""
        return bool(self.domains) or self.ring != "contiguous" or self.uneven

    def coverage(self) -> Coverage:
        """What follows this scenario: the closed forms with job-wide failures alone (they compose exactly);
        with domains, a ring order or uneven groups (``needs_kernel``) the epochs of the scenario kernels."""
        if self.needs_kernel:
            return Coverage("epoch_pool", "the closed-form time-to-train has no domains, ring orders or uneven "
                                          "groups: the scenario kernels answer")
        return COVERED

    @property
    def uneven(self) -> bool:
        return self.group_mtbf_min is not None or (self.lemon_fraction > 0 and self.lemon_factor != 1.0)

    # -- validation against a cluster size ----------------------------------------------------------------
    def check(self, groups: int) -> None:
        """Raise ValueError if a part does not fit a cluster of ``groups`` groups."""
        for level in self.domains:
            if level.size > groups:
                raise ValueError(f"domain size must be <= groups (N): {level.size} > {groups}")
        if not isinstance(self.ring, str):
            ring = np.asarray(self.ring)
            if ring.size != groups or not np.array_equal(np.sort(ring), np.arange(groups)):
                raise ValueError(f"the ring order must be a permutation of the {groups} group ids 0..{groups - 1}")
        if self.group_mtbf_min is not None and len(self.group_mtbf_min) != groups:
            raise ValueError(f"per-group MTBFs: {len(self.group_mtbf_min)} values for {groups} groups")

    # -- derived quantities -------------------------------------------------------------------------------
    def ring_order(self, groups: int) -> np.ndarray:
        """``int32[N]``: the physical group at each ring position."""
        self.check(groups)
        if self.ring == "contiguous":
            return np.arange(groups, dtype=np.int32)
        if self.ring == "interleaved":
            if not self.domains:
                raise ValueError("ring 'interleaved' needs failure domains (a domain size)")
            return interleaved_ring(groups, max(level.size for level in self.domains))
        return np.asarray(self.ring, dtype=np.int32)

    def rate_multipliers(self, groups: int, group_mtbf_min: float) -> np.ndarray:
        """``float64[N]``: each physical group's failure rate relative to the model's group rate."""
        self.check(groups)
        if self.group_mtbf_min is not None:
            return group_mtbf_min / np.asarray(self.group_mtbf_min, dtype=np.float64)
        mult = np.ones(groups)
        if self.lemon_fraction > 0:
            lemons = lemon_groups(groups, self.lemon_fraction, self.lemon_seed)
            mult[lemons] = self.lemon_factor
        return mult

    def job_rate_per_min(self, groups: int, group_mtbf_min: float) -> float:
        """mu: the rate of job-wide interruptions, per minute (0 when off)."""
        if self.job_mtbf_min is not None:
            return 1.0 / self.job_mtbf_min
        if self.job_fraction:
            f = self.job_fraction
            total = self.rate_multipliers(groups, group_mtbf_min).sum() / group_mtbf_min
            total += sum(level.count(groups) / level.mtbf_min for level in self.domains)
            return f / (1.0 - f) * total
        return 0.0

    def describe(self) -> dict:
        """A JSON-able summary of the parts that are on."""
        out = {}
        if self.job_mtbf_min is not None:
            out["job_mtbf_min"] = self.job_mtbf_min
        if self.job_fraction:
            out["job_fraction"] = self.job_fraction
        if self.domains:
            out["domains"] = [{"size": d.size, "mtbf_min": d.mtbf_min, **({"name": d.name} if d.name else {})}
                              for d in self.domains]
        out["ring"] = self.ring if isinstance(self.ring, str) else "custom"
        if self.microbatches > 1:
            out["microbatches"] = self.microbatches
        if self.lemon_fraction > 0:
            out.update(lemon_fraction=self.lemon_fraction, lemon_factor=self.lemon_factor,
                       lemon_seed=self.lemon_seed)
        if self.group_mtbf_min is not None:
            out["group_mtbf_min"] = "per-group (file)"
        return out


def interleaved_ring(groups: int, size: int) -> np.ndarray:
    """Ring position i holds group ``(i mod D) size + (i div D)``, ``D = ceil(N/size)``, ids ``>= N`` skipped."""
    d = -(-groups // size)
    i = np.arange(d * size)
    ids = (i % d) * size + i // d
    return ids[ids < groups].astype(np.int32)


def lemon_groups(groups: int, fraction: float, seed: int) -> np.ndarray:
    """The ``round(q N)`` lemon groups, drawn once from ``seed`` (sorted physical ids)."""
    count = int(round(fraction * groups))
    return np.sort(np.random.default_rng(seed).permutation(groups)[:count])


def _read_tokens(path: str, what: str, parse) -> tuple:
    """Values from a text file: separated by commas, spaces or newlines, ``#`` starts a comment; ``parse``
    maps a token to a value or raises ValueError with its own message."""
    from .inputfile import read_text

    values = []
    for line in read_text(path, what).splitlines():  # a regular file only (a FIFO would block)
        for tok in line.split("#", 1)[0].replace(",", " ").split():
            values.append(parse(tok))
    if not values:
        raise ValueError(f"{what} {path} holds no values")
    return tuple(values)


def read_ring_file(path: str) -> tuple[int, ...]:
    """A ring order from a text file: physical group ids in ring order."""
    def group_id(tok):
        if not tok.isascii() or not tok.lstrip("-").isdigit():
            raise ValueError(f"ring file {path}: {tok!r} is not a group id")
        return int(tok)

    return _read_tokens(path, "ring file", group_id)


def read_group_mtbf_file(path: str) -> tuple[float, ...]:
    """Per-group MTBFs (minutes) from a text file: one value per physical group, in group order."""
    def mtbf(tok):
        try:
            value = float(tok)
        except ValueError:
            raise ValueError(f"group MTBF file {path}: {tok!r} is not a number") from None
        return check_positive(f"group MTBF in {path}", value)

    return _read_tokens(path, "group MTBF file", mtbf)


def single_domain_wipeout_fraction(scenario: Scenario, placement) -> float | None:
    """Among domain events (rate-weighted over every domain of every level), the fraction that alone, from
    full health, lose a shard (all its holders in the one domain). None without domains."""
    if not scenario.domains:
        return None
    n = placement.groups
    ring = scenario.ring_order(n)
    holders_physical = ring[placement.holders]  # (shards, r): physical ids of each shard's holders
    fatal_rate, total_rate = 0.0, 0.0
    for level in scenario.domains:
        dom = level.members(n)[holders_physical]  # domain of each holder
        one_domain = (dom == dom[:, :1]).all(axis=1)
        fatal_domains = np.unique(dom[one_domain, 0])
        fatal_rate += fatal_domains.size / level.mtbf_min
        total_rate += level.count(n) / level.mtbf_min
    return fatal_rate / total_rate


def job_wide_uptime(surv: np.ndarray, groups: int, group_rate: float, job_rate: float) -> tuple[float, float]:
    r"""Exact E[epoch uptime] and P(the epoch ends by a job-wide interruption), i.i.d. exponential groups.

    Derivation. With k groups down and no wipe-out, the next event comes after an
    ``Exp((N - k) lambda + mu)`` sojourn; it is the job-wide interruption with probability
    ``mu / ((N - k) lambda + mu)``. The failure order is independent of the job-wide process, so the epoch
    reaches state k iff the first k failures did not wipe out (``P(T > k)``) and no job-wide event came in the
    k sojourns before:

    .. math::  E[U] = \sum_{k<N} P(T > k)\, \frac{\pi_k}{(N-k)\lambda + \mu}, \qquad
               P(\text{job end}) = \sum_{k<N} P(T > k)\, \frac{\pi_k \mu}{(N-k)\lambda + \mu}, \qquad
               \pi_k = \prod_{i<k} \frac{(N-i)\lambda}{(N-i)\lambda + \mu}.

    Equivalently ``E[U] = \int_0^\infty P(\text{no wipe-out by } t) e^{-\mu t} dt``. ``mu = 0`` gives
    ``theory.expected_uptime``. ``pi_k`` is accumulated in logs (no underflow at large N).
    """
    k = np.arange(groups)
    rates = (groups - k) * group_rate
    log_pi = np.concatenate([[0.0], np.cumsum(np.log(rates) - np.log(rates + job_rate))[:-1]])
    weight = np.asarray(surv[:groups], np.float64) * np.exp(log_pi) / (rates + job_rate)
    return math.fsum(weight), math.fsum(weight * job_rate)


EXACT_SMALL_MAX_N = 14  # 2^N failure sets


def exact_epoch_small(scenario: Scenario, placement, group_mtbf_min: float) -> dict:
    r"""Exact epoch statistics under a scenario for small N (<= ``EXACT_SMALL_MAX_N``), exponential clocks.

    Derivation. The set S of failed groups is a continuous-time Markov chain on the 2^N subsets: from S each
    up group g fails at rate ``lambda_g`` (its multiplier times 1/MTBF), each domain with an up member fires at
    its rate ``1/M`` and takes S to ``S | domain``, and the job-wide process ends the epoch at rate ``mu``.
    S is absorbing once some shard has no holder up (a wipe-out). Transitions only add groups, so the
    first-step equations are triangular in the subset order (a superset is a larger bitmask) and solve
    exactly from the full set down:

    .. math::  E[U_S] = \frac{1 + \sum_{S'} q_{S S'} E[U_{S'}]}{q_S}, \qquad
               P^{job}_S = \frac{\mu + \sum_{S'} q_{S S'} P^{job}_{S'}}{q_S}, \qquad
               P^{dom}_S = \frac{\sum_{S' \text{ wiped by a domain}} q_{S S'} + \sum_{S' \text{ alive}} q_{S S'}
               P^{dom}_{S'}}{q_S},

    with ``q_S`` the total exit rate and the sums over non-wiped targets (wiped targets contribute 0 to
    E[U] and P^job). Returns ``uptime_min`` (from all up), ``p_job_end`` and ``p_fatal_domain``.
    """
    n = placement.groups
    if n > EXACT_SMALL_MAX_N:
        raise ValueError(f"exact scenario epochs need N <= {EXACT_SMALL_MAX_N} (2^N states), got {n}")
    scenario.check(n)
    ring = scenario.ring_order(n)
    holders = ring[placement.holders]  # physical holders of each shard
    shard_masks = [sum(1 << int(g) for g in row) for row in holders]
    rates = scenario.rate_multipliers(n, group_mtbf_min) / group_mtbf_min
    domains = []
    for level in scenario.domains:
        members = level.members(n)
        for d in range(level.count(n)):
            domains.append((sum(1 << g for g in np.flatnonzero(members == d)), 1.0 / level.mtbf_min))
    mu = scenario.job_rate_per_min(n, group_mtbf_min)
    size = 1 << n
    uptime, p_job, p_dom = np.zeros(size), np.zeros(size), np.zeros(size)
    wiped = np.array([any(m & s == s for s in shard_masks) for m in range(size)])
    for m in range(size - 1, -1, -1):
        if wiped[m]:
            continue
        q, acc_u, acc_j, acc_d = mu, 1.0, mu, 0.0
        for g in range(n):
            if not m >> g & 1:
                t = m | (1 << g)
                q += rates[g]
                if not wiped[t]:
                    acc_u += rates[g] * uptime[t]
                    acc_j += rates[g] * p_job[t]
                    acc_d += rates[g] * p_dom[t]
        for mask, rate in domains:
            t = m | mask
            if t == m:
                continue
            q += rate
            if wiped[t]:
                acc_d += rate
            else:
                acc_u += rate * uptime[t]
                acc_j += rate * p_job[t]
                acc_d += rate * p_dom[t]
        uptime[m], p_job[m], p_dom[m] = acc_u / q, acc_j / q, acc_d / q
    return {"uptime_min": float(uptime[0]), "p_job_end": float(p_job[0]), "p_fatal_domain": float(p_dom[0])}
