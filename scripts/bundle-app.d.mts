export type AppName = 'cli' | 'relay' | 'demo';
/** Each app's entry, default bundle and what stays outside the bundle. */
export const APPS: Readonly<Record<AppName, { entry: string; out: string; external: readonly string[] }>>;
/** Bundles `app` from the sources into one ESM file (default its `out`); resolves to its absolute path. */
export function bundleApp(app: AppName, file?: string): Promise<string>;
/** Whether `app`'s bundle is missing or older than a source it is made of. */
export function bundleIsStale(app: AppName, file?: string): boolean;
