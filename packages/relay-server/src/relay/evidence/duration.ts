// ISO 8601 durations (`P5Y`, `P10Y`, `P1Y6M`, `P30D`, `PT12H`, `P2W`) as the evidence profile
// writes retention periods (wmp-tables §4, §9), added to a time on the UTC calendar.

const DURATION =
  /^P(?!$)(?:(\d{1,4})Y)?(?:(\d{1,5})M)?(?:(\d{1,6})W)?(?:(\d{1,7})D)?(?:T(?!$)(?:(\d{1,8})H)?(?:(\d{1,10})M)?(?:(\d{1,12})S)?)?$/;

/** A parsed duration: calendar parts and a fixed part in ms. */
export interface Duration {
  readonly text: string;
  readonly years: number;
  readonly months: number;
  readonly days: number;
  readonly ms: number;
}

/** Parses an ISO 8601 duration (no fractions, no negative parts); undefined when it is none. */
export function parseDuration(text: string): Duration | undefined {
  const m = typeof text === 'string' ? DURATION.exec(text) : null;
  if (!m) return undefined;
  const n = (i: number) => (m[i] === undefined ? 0 : Number(m[i]));
  return {
    text,
    years: n(1),
    months: n(2),
    days: n(3) * 7 + n(4),
    ms: ((n(5) * 60 + n(6)) * 60 + n(7)) * 1000,
  };
}

/** `at` (ms) plus `d`, years and months on the UTC calendar (29 February plus a year is 1 March). */
export function addDuration(at: number, d: Duration): number {
  const date = new Date(at);
  date.setUTCFullYear(date.getUTCFullYear() + d.years, date.getUTCMonth() + d.months, date.getUTCDate() + d.days);
  return date.getTime() + d.ms;
}
