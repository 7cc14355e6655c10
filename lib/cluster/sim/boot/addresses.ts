// Each sim worker's addresses, by its index (0-based): a /24 pod CIDR and a loopback node IP, both
// unique up to SIM_MAX_WORKERS. The first workers keep the addresses they had before clusters grew
// past 255 (10.244.<i>.0/24, 127.0.1.<i+1>), so small clusters look exactly as they did.
import { RekindleError } from "../../../errors.js";

/** The most workers a sim cluster can have: the /24 pod CIDRs that fit in SIM_POD_CIDR_RANGE. */
export const SIM_MAX_WORKERS = 1000;

/** Every worker's pod CIDR lies in 10.244.0.0/14 (10.244.0.0 to 10.247.255.255: 1024 /24s). */
export const SIM_POD_CIDR_RANGE = "10.244.0.0/14";

function checkIndex(index: number): void {
  if (!Number.isInteger(index) || index < 0 || index >= SIM_MAX_WORKERS) {
    throw new RekindleError(
      "INTERNAL",
      `sim worker index ${index} is outside 0..${SIM_MAX_WORKERS - 1}: no address for it`,
    );
  }
}

/** 10.244.0.0/24 for the first worker, …, 10.244.255.0/24, then 10.245.0.0/24 and on. */
export function workerPodCidr(index: number): string {
  checkIndex(index);
  return `10.${244 + Math.floor(index / 256)}.${index % 256}.0/24`;
}

/**
 * 127.0.1.1 for the first worker, …, 127.0.1.254, then 127.0.2.1 and on: loopback, so nothing ever
 * leaves this machine, and never .0 or .255 of a /24 nor 127.0.0.x (this machine's own).
 */
export function workerNodeIp(index: number): string {
  checkIndex(index);
  return `127.0.${1 + Math.floor(index / 254)}.${(index % 254) + 1}`;
}
