// The version printed by `wmp --version`, from this app's package.json (inlined by the build).
import pkg from '../package.json' with { type: 'json' };

export const VERSION: string = pkg.version;
