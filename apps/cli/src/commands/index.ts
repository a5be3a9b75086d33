// The command table: every command wmp knows, in the order help lists them. Dispatch, `--help`
// and the README's command list all come from here.
import { buildTable, type CommandTable } from '../command.js';
import { allowCommands } from './allow.js';
import { cardCommands } from './card.js';
import { connectCommands } from './connect.js';
import { consignCommands } from './consign.js';
import { evidenceCommands } from './evidence.js';
import { flowCommands } from './flow.js';
import { groupCommands } from './group.js';
import { keysCommands } from './keys.js';
import { liveCommands } from './live.js';
import { mailCommands } from './mail.js';
import { statusCommands } from './message-status.js';
import { routeCommands } from './route.js';
import { serveCommands } from './serve.js';

export const COMMANDS: CommandTable = buildTable([
  keysCommands,
  cardCommands,
  ...liveCommands,
  ...consignCommands,
  ...statusCommands,
  ...evidenceCommands,
  ...routeCommands,
  ...connectCommands,
  ...serveCommands,
  mailCommands,
  allowCommands,
  groupCommands,
  flowCommands,
]);
