import { MemoryClientStore } from '../src/index.js';
import { storeSuite } from './store-suite.js';

storeSuite('MemoryClientStore', { open: async () => new MemoryClientStore() });
