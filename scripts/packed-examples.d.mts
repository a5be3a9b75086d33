export interface PackedExample {
  readonly dir: string;
  readonly file: string;
  readonly path: string;
}
export function packages(): { dir: string; manifest: { name: string; version: string; [key: string]: unknown } }[];
export function installLine(readme: string): string[];
export function embeddedExamples(dir: string): string[];
export function packageOf(specifier: string): string;
export function bareImports(code: string): string[];
export function prepare(work: string): { project: string; examples: PackedExample[] };
