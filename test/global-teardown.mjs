export default async function globalTeardown() {
  const db = globalThis.__embeddedPg;
  if (db?.owned) await db.stop();
}
