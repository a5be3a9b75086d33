export type { Transport, TransportMessageExtra, TransportSendOptions } from './transport.js';
