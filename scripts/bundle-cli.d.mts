/** Bundles the `wmp` command from the sources into one ESM file; resolves to its absolute path. */
export function bundleCli(file: string): Promise<string>;
