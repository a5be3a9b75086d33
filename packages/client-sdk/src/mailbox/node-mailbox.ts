// Node only (exported by `@wmp/client-sdk/node` in place of the browser-safe Mailbox): the box
// calls go through `nodeFetch`, with the `tls` options applied.
import { nodeFetch } from '../tls/node-fetch.js';
import { hasTlsOptions } from '../tls/options.js';
import { MailboxError } from './errors.js';
import { Mailbox as BrowserSafeMailbox, type MailboxOptions } from './mailbox.js';

/**
 * The `Mailbox` with `nodeFetch` (unless `fetch` is given) and `tls` applied to it. `tls` with a
 * `fetch` of your own is refused (`tls_options`): that one is yours to configure.
 */
export class Mailbox extends BrowserSafeMailbox {
  constructor(options: MailboxOptions) {
    const { tls, ...rest } = options;
    if (hasTlsOptions(tls) && rest.fetch !== undefined) throw new MailboxError('tls_options');
    super({ fetch: nodeFetch(tls), ...rest });
  }
}
