"""The dnnc neurons that a PyNN selection of cells names: runs of consecutive members of one
group (populations.Group), and dnnc's references to them."""

import numpy as np

from . import simulator


def runs(cells):
    """The neurons of `cells` (a Population, PopulationView, Assembly or IDs) as runs of
    consecutive members of one group: (group, start, stop, position of the run's first
    neuron in `cells`), start and stop counted in the group."""
    ids = np.asarray(getattr(cells, "all_cells", cells), dtype=np.int64)
    if ids.size == 0:
        return []
    owners = simulator.state.population_of(ids)
    breaks = np.flatnonzero((np.diff(ids) != 1) | (np.diff(owners) != 0)) + 1
    result = []
    for first, last in zip(np.r_[0, breaks], np.r_[breaks, ids.size]):
        population = simulator.state.populations[owners[first]]
        start = int(ids[first] - int(population.first_id))
        stop = start + int(last - first)
        for group in population.groups():
            a, b = max(start, group.first), min(stop, group.first + group.size)
            if a < b:
                result.append((group, a - group.first, b - group.first, int(first) + a - start))
    return result


def reference(group, start, stop):
    """dnnc's reference to members start..stop-1 of a group."""
    if start == 0 and stop == group.size:
        return group.dnnc_id
    return "%s[%d:%d]" % (group.dnnc_id, start, stop)


def references(cells):
    return [reference(group, start, stop) for group, start, stop, _ in runs(cells)]


def positions(cells, numbers):
    """The position in `cells` of each neuron number in `numbers`."""
    ids = np.asarray(getattr(cells, "all_cells", cells), dtype=np.int64)
    order = np.argsort(ids, kind="stable")
    return order[np.searchsorted(ids, numbers, sorter=order)]
