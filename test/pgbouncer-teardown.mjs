import globalTeardown from './global-teardown.mjs';

export default async function pgbouncerTeardown() {
  await globalThis.__pgbouncer?.stop();
  await globalTeardown();
}
