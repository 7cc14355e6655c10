// Zone disruption (reference 003): the node lifecycle controller computes a state per zone and
// swaps its taint rate. A zone PartialDisruption (more than 2 and at least unhealthyZoneThreshold
// of its nodes not Ready) taints nothing when it has largeClusterSizeThreshold nodes or fewer, and
// at the secondary rate when larger; every zone FullDisruption ("master disruption mode") taints
// nothing and lifts the taints it put. Each scenario carves its zone out of the workers (their zone
// label; lib/scenario/zone-carve.ts), loses the fewest nodes that put it in the state, then the
// judged nodes, whose pods the windows follow; one zone then returns part-way. Zone states come
// from kube-controller-manager's log (lib/observe/zone-states.ts), so the scenarios need it: the
// sim and kind have it.
import { everyZoneFull } from "./every-zone.js";
import { largeZonePartial, smallZonePartial } from "./partial.js";
import { zoneReturnsPartWay } from "./returns.js";

/** The family's scenarios, in the order `rekindle run` runs them. */
export const scenarios = [smallZonePartial, everyZoneFull, largeZonePartial, zoneReturnsPartWay];
