/** The open event streams of one app, so `close()` can end them all. */
export class StreamRegistry {
  readonly #open = new Set<{ close(): void }>();

  get size(): number {
    return this.#open.size;
  }

  add(stream: { close(): void }): () => void {
    this.#open.add(stream);
    return () => this.#open.delete(stream);
  }

  closeAll(): void {
    for (const stream of [...this.#open]) stream.close();
    this.#open.clear();
  }
}
