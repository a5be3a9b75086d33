import { Hono } from 'hono';
import type { BoxApp } from './app.js';
import { BOX_API_PREFIX } from './options.js';

/**
 * Mounts the box app at `BOX_API_PREFIX` on `parent` (default: a new app) and returns the parent:
 * what the relay does, and what a standalone box or a test does with a bare app.
 */
export function mountBoxApp(box: BoxApp, parent: Hono = new Hono()): Hono {
  return parent.route(BOX_API_PREFIX, box);
}
