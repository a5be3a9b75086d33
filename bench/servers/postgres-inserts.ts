// The bare PostgreSQL baseline of the queue benches: one client inserting the rows the relay's
// queue would store (the store's own INSERT, unnest of 100 rows per transaction, synchronous
// commit), as fast as it can.
import pg from 'pg';

const HOUR = 3600_000;
let ids = 0;
const nextId = () => `bare-${(++ids).toString(36).padStart(21, '0')}`;
/** Each call's seqs start past the last call's, so rounds never collide on (recipient, seq). */
let seqBase = 1_000_000_000;

/** Rows per second of one client inserting the same rows, 100 per transaction. */
export async function bareInsertRate(
  url: string,
  recipients: readonly string[],
  senders: readonly string[],
  body: string,
  ms: number,
): Promise<number> {
  const pairs = recipients.length;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SET synchronous_commit = on');
    const expiresAt = Date.now() + 24 * HOUR;
    const seqs = new Array<number>(pairs).fill(seqBase);
    seqBase += 100_000_000;
    let rows = 0;
    const start = performance.now();
    while (performance.now() - start < ms) {
      const cols = { r: [] as string[], s: [] as number[], id: [] as string[], snd: [] as string[] };
      const more = { exp: [] as number[], bytes: [] as number[], notify: [] as boolean[], body: [] as string[] };
      for (let k = 0; k < 100; k++) {
        const pair = (rows + k) % pairs;
        cols.r.push(recipients[pair]!);
        cols.s.push(++seqs[pair]!);
        cols.id.push(nextId());
        cols.snd.push(senders[pair]!);
        more.exp.push(expiresAt);
        more.bytes.push(Buffer.byteLength(body));
        more.notify.push(false);
        more.body.push(body);
      }
      await client.query('BEGIN');
      // The store's own INSERT: each row with its own values, bodies included.
      await client.query({
        name: 'bare_insert',
        text: `INSERT INTO wmp_messages (recipient, seq, message_id, sender, expires_at, bytes, notify, body)
               SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::bigint[],
                                    $7::boolean[], $8::text[])`,
        values: [cols.r, cols.s, cols.id, cols.snd, more.exp, more.bytes, more.notify, more.body],
      });
      await client.query('COMMIT');
      rows += 100;
    }
    return (rows * 1000) / (performance.now() - start);
  } finally {
    await client.end();
  }
}
