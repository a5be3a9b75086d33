/** One decision record as the index sees it. */
export interface DecisionRecord {
  readonly file: string;
  /** The number in the file name, if it has the NNNN-slug.md form. */
  readonly fileNumber: string | undefined;
  /** The number and title of its first line, `# NNNN. Title`. */
  readonly number: string | undefined;
  readonly title: string | undefined;
  /** Its `<!-- area: ... -->` line, else `unfiled`. */
  readonly area: string;
}
export const START: string;
export const END: string;
export const AREAS: readonly string[];
export function readRecords(dir: string): DecisionRecord[];
export function problems(records: readonly DecisionRecord[]): string[];
export function renderIndex(records: readonly DecisionRecord[]): string;
export function withIndex(text: string, index: string): string;
export function repositoryPaths(root: string): { indexFile: string; recordsDir: string };
