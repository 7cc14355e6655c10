// Which kwok process plays which worker. Two kinds, side by side in one cluster:
// - a worker with its own kwok (`--manage-single-node`): lost by SIGKILL, partitioned by SIGSTOP,
//   returned by a fresh process: what every sim scenario was written and calibrated against;
// - a "fleet" worker in a shared kwok, one per zone (or per chunk of a zone): the kwok selects its
//   nodes by the label SIM_KWOK_GROUP_LABEL, so taking a node's label away ends its Lease renewals
//   (node loss, partition) and putting it back returns the node, without touching the others.
// Workers are spread over zones round-robin (zone of worker i = i mod zones); the first
// `dedicated` workers have their own kwok, the rest share.
import { zoneName } from "../boot/options.js";

/** The label a shared kwok selects its nodes by; its value is the group's name. */
export const SIM_KWOK_GROUP_LABEL = "kwok.rekindle.dev/group";

export interface SimKwokGroupPlan {
  /** Also the label value: `<zone>-<n>`, n from 1 per zone. */
  name: string;
  zone: string;
  /** Worker indices (0-based) this kwok plays. */
  members: number[];
}

export interface SimWorkerPlan {
  index: number;
  zone: string;
  /** The shared kwok group, or undefined when the worker has its own kwok. */
  group: string | undefined;
}

export interface SimKwokPlan {
  workers: SimWorkerPlan[];
  groups: SimKwokGroupPlan[];
}

export interface SimKwokPlanInput {
  workers: number;
  zones: number;
  /** How many workers, from the first, have their own kwok. */
  dedicated: number;
  /** The most nodes one shared kwok plays; a zone with more fleet workers gets several. */
  nodesPerKwok: number;
}

export function planKwoks(input: SimKwokPlanInput): SimKwokPlan {
  const workers: SimWorkerPlan[] = [];
  const groups: SimKwokGroupPlan[] = [];
  const open = new Map<string, SimKwokGroupPlan>();
  const countByZone = new Map<string, number>();
  for (let index = 0; index < input.workers; index++) {
    const zone = zoneName(index % input.zones);
    if (index < input.dedicated) {
      workers.push({ index, zone, group: undefined });
      continue;
    }
    let group = open.get(zone);
    if (!group || group.members.length >= input.nodesPerKwok) {
      const n = (countByZone.get(zone) ?? 0) + 1;
      countByZone.set(zone, n);
      group = { name: `${zone}-${n}`, zone, members: [] };
      open.set(zone, group);
      groups.push(group);
    }
    group.members.push(index);
    workers.push({ index, zone, group: group.name });
  }
  return { workers, groups };
}
