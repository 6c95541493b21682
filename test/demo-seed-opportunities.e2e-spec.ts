import { seedDemoIfEmpty } from '#identity/demo-seed.js';
import { useEmptyDatabase } from './factories.js';

/** The demo workspace has a few deals per company, each linked to a person of that company (issue 11). */
describe('demo seed: opportunities', () => {
  const db = useEmptyDatabase('seed_opp');

  it('creates two opportunities per demo company, in several stages, with a contact of that company', async () => {
    const text = await seedDemoIfEmpty(db.ds, 'http://localhost:4321');
    expect(text).toContain('20 companies, 50 people and 40 opportunities');
    const [row] = await db.ds.query(`
      SELECT count(*)::int AS n,
             count(DISTINCT o.company_id)::int AS companies,
             count(DISTINCT o.stage)::int AS stages,
             count(*) FILTER (WHERE p.company_id = o.company_id)::int AS contacts_of_the_company,
             count(*) FILTER (WHERE o.amount_micros > 0 AND o.amount_currency_code ~ '^[A-Z]{3}$' AND o.close_date IS NOT NULL)::int AS priced
        FROM opportunities o
        LEFT JOIN people p ON p.workspace_id = o.workspace_id AND p.id = o.point_of_contact_id`);
    expect(row).toEqual({ n: 40, companies: 20, stages: 5, contacts_of_the_company: 40, priced: 40 });
    // The counters the list endpoints read agree.
    const [counter] = await db.ds.query(`SELECT sum(live_count)::int AS n FROM record_counts WHERE object = 'opportunities'`);
    expect(counter.n).toBe(40);
  });
});
