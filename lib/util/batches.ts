// Runs an async action over many items a few at a time: enough in flight to be quick, few enough
// not to swamp a small apiserver.
export async function inBatches<T>(
  items: readonly T[],
  size: number,
  each: (item: T) => Promise<void>,
): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(each));
}
