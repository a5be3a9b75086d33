/** Length-prefixed binary records for our own saved formats (not a wire format). */
export class ByteWriter {
  private readonly parts: Uint8Array[] = [];
  private length = 0;

  bytes(b: Uint8Array): this {
    this.u32(b.length);
    return this.raw(b);
  }

  u8(n: number): this {
    return this.raw(Uint8Array.of(n));
  }

  u32(n: number): this {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, n);
    return this.raw(b);
  }

  raw(b: Uint8Array): this {
    this.parts.push(b);
    this.length += b.length;
    return this;
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

/** Reads what `ByteWriter` wrote; any overrun throws a RangeError, which callers turn into their own error. */
export class ByteReader {
  private at = 0;
  constructor(private readonly buf: Uint8Array) {}

  bytes(): Uint8Array {
    return this.take(this.u32());
  }

  u8(): number {
    return this.take(1)[0]!;
  }

  u32(): number {
    const b = this.take(4);
    return new DataView(b.buffer, b.byteOffset, 4).getUint32(0);
  }

  take(n: number): Uint8Array {
    if (n > this.buf.length - this.at) throw new RangeError('truncated');
    const out = this.buf.slice(this.at, this.at + n);
    this.at += n;
    return out;
  }

  get done(): boolean {
    return this.at === this.buf.length;
  }
}
