// Browser-safe bindings. Each area has its own barrel while the package is being built;
// they are flattened into explicit exports when it lands.
export * from './local.js';
export * from './web.js';
