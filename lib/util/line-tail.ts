/** The last `capacity` lines pushed, oldest first. */
export class LineTail {
  readonly #lines: string[] = [];

  constructor(readonly capacity: number) {}

  push(line: string): void {
    this.#lines.push(line);
    if (this.#lines.length > this.capacity) this.#lines.shift();
  }

  lines(): string[] {
    return [...this.#lines];
  }
}
