// metav1.MicroTime as the API server writes it (Lease renewTime and acquireTime): UTC, RFC 3339
// with exactly six fractional digits. One formatter for every writer of a Lease.

/** `ms` since the epoch plus `micros` (0–999) more, as a MicroTime. */
export function formatMicroTime(ms: number, micros = 0): string {
  const iso = new Date(ms).toISOString(); // …:05.123Z
  return `${iso.slice(0, -1)}${String(micros).padStart(3, "0")}Z`;
}
