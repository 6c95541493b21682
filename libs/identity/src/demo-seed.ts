import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { ConflictError } from '#errors/errors.js';
import { scope } from '#records/query/scope.js';
import { addMember, createApiKey, createUser, createWorkspace, findRole } from './accounts.js';
import { expiryFromChoice } from './api-key-expiry.js';

export const DEMO_ADMIN_EMAIL = 'admin@demo.local';

const COMPANIES: [name: string, domain: string][] = [
  ['Acme', 'acme.com'],
  ['Globex', 'globex.com'],
  ['Initech', 'initech.com'],
  ['Umbrella', 'umbrella.com'],
  ['Hooli', 'hooli.com'],
  ['Pied Piper', 'piedpiper.com'],
  ['Stark Industries', 'starkindustries.com'],
  ['Wayne Enterprises', 'wayne-enterprises.com'],
  ['Wonka Industries', 'wonka.com'],
  ['Cyberdyne Systems', 'cyberdyne.com'],
  ['Tyrell Corporation', 'tyrell.com'],
  ['Soylent', 'soylent.com'],
  ['Massive Dynamic', 'massivedynamic.com'],
  ['Aperture Science', 'aperturescience.com'],
  ['Vandelay Industries', 'vandelay.com'],
  ['Dunder Mifflin', 'dundermifflin.com'],
  ['Oscorp', 'oscorp.com'],
  ['Gringotts', 'gringotts.com'],
  ['Monsters Inc', 'monstersinc.com'],
  ['Bluth Company', 'bluth.com'],
];

const FIRST_NAMES = [
  'Emma',
  'Liam',
  'Olivia',
  'Noah',
  'Ava',
  'Lucas',
  'Mia',
  'Ethan',
  'Sofia',
  'Mateo',
  'Chloe',
  'Hugo',
  'Zoe',
  'Arjun',
  'Lea',
  'Kenji',
  'Nora',
  'Omar',
  'Ines',
  'Felix',
  'Priya',
  'Diego',
  'Hannah',
  'Yusuf',
  'Clara',
];
const LAST_NAMES = [
  'Smith',
  'Martin',
  'Garcia',
  'Müller',
  'Rossi',
  'Tanaka',
  'Dubois',
  'Kowalski',
  'Silva',
  'Nguyen',
  'Johnson',
  'Laurent',
  'Patel',
  'Schmidt',
  'Bernard',
  'Kim',
  'Lopez',
  'Novak',
  'Okafor',
  'Jensen',
  'Haddad',
  'Moreau',
  'Costa',
  'Fischer',
  'Walsh',
];
const PEOPLE_COUNT = 50;
/** Deals per demo company, in a spread of stages, amounts and close dates. */
const OPPORTUNITIES_PER_COMPANY = 2;
const STAGES = ['NEW', 'SCREENING', 'MEETING', 'PROPOSAL', 'CUSTOMER'];
const DEALS = ['Pilot', 'Annual licence', 'Expansion', 'Renewal', 'Support plan'];
/** The last few people are not linked to any company. */
const PEOPLE_WITHOUT_COMPANY = 5;

function emailLocalPart(first: string, last: string): string {
  return `${first}.${last}`
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
}

/**
 * First start on an empty database: a "Demo" workspace with sample records, an Admin
 * user with a random password and an Admin API key. Returns the text to print once
 * (the password and key exist nowhere else), or undefined when any workspace exists.
 */
export async function seedDemoIfEmpty(ds: DataSource, publicUrl: string): Promise<string | undefined> {
  if ((await ds.query('SELECT 1 FROM workspaces LIMIT 1')).length) return undefined;
  let workspace;
  try {
    workspace = await createWorkspace(ds, 'Demo');
  } catch (err) {
    if (err instanceof ConflictError) return undefined; // another process seeded meanwhile
    throw err;
  }

  // The demo records, written as every statement on records is (libs/records/src/query/scope.ts).
  const records = (table: string) => scope({ workspaceId: workspace.id }, { schema: { table } });
  await ds.transaction(async (tx) => {
    const companies: { id: string; domain_primary_link_url: string }[] = await tx.query(
      `INSERT INTO ${records('companies').table} (${records('companies').insertColumns}, name, domain_primary_link_url)
       SELECT ${records('companies').insertValues}, name, domain FROM unnest($2::text[], $3::text[]) AS t(name, domain)
       RETURNING id, domain_primary_link_url`,
      [workspace.id, COMPANIES.map(([name]) => name), COMPANIES.map(([, domain]) => `https://${domain}`)],
    );
    const people = Array.from({ length: PEOPLE_COUNT }, (_, i) => {
      const first = FIRST_NAMES[i % FIRST_NAMES.length];
      // Shifted on the second pass through FIRST_NAMES so no two people share a name.
      const last = LAST_NAMES[(i * 7 + Math.floor(i / LAST_NAMES.length)) % LAST_NAMES.length];
      const company = i < PEOPLE_COUNT - PEOPLE_WITHOUT_COMPANY ? companies[i % companies.length] : undefined;
      const domain = company ? new URL(company.domain_primary_link_url).hostname : 'example.com';
      return { first, last, email: `${emailLocalPart(first, last)}@${domain}`, companyId: company?.id ?? null };
    });
    const inserted: { id: string; company_id: string | null }[] = await tx.query(
      `INSERT INTO ${records('people').table} (${records('people').insertColumns}, first_name, last_name, primary_email, company_id)
       SELECT ${records('people').insertValues}, first, last, email, company FROM unnest($2::text[], $3::text[], $4::text[], $5::uuid[]) AS t(first, last, email, company)
       RETURNING id, company_id`,
      [workspace.id, people.map((p) => p.first), people.map((p) => p.last), people.map((p) => p.email), people.map((p) => p.companyId)],
    );
    const deals = companies.flatMap((company, c) =>
      Array.from({ length: OPPORTUNITIES_PER_COMPANY }, (_, k) => {
        const i = c * OPPORTUNITIES_PER_COMPANY + k;
        const closeDate = new Date(Date.UTC(2026, (i * 5) % 12, 1 + ((i * 11) % 28)));
        return {
          name: `${COMPANIES[c][0]} ${DEALS[i % DEALS.length]}`,
          micros: String((5 + ((i * 37) % 95)) * 1000 * 1_000_000),
          currency: i % 4 === 3 ? 'EUR' : 'USD',
          closeDate: closeDate.toISOString(),
          stage: STAGES[i % STAGES.length],
          companyId: company.id,
          contactId: inserted.find((p) => p.company_id === company.id)?.id ?? null,
        };
      }),
    );
    await tx.query(
      `INSERT INTO ${records('opportunities').table} (${records('opportunities').insertColumns}, name, amount_micros, amount_currency_code, close_date, stage, company_id, point_of_contact_id)
       SELECT ${records('opportunities').insertValues}, * FROM unnest($2::text[], $3::bigint[], $4::text[], $5::timestamptz[], $6::text[], $7::uuid[], $8::uuid[])`,
      [
        workspace.id,
        deals.map((d) => d.name),
        deals.map((d) => d.micros),
        deals.map((d) => d.currency),
        deals.map((d) => d.closeDate),
        deals.map((d) => d.stage),
        deals.map((d) => d.companyId),
        deals.map((d) => d.contactId),
      ],
    );
  });

  const admin = await findRole(ds, workspace.id, 'Admin');
  const password = randomBytes(12).toString('base64url');
  const user = await createUser(ds, DEMO_ADMIN_EMAIL, password);
  await addMember(ds, workspace.id, user.id, admin);
  const key = await createApiKey(ds, {
    workspaceId: workspace.id,
    role: admin,
    name: 'Demo key',
    expiresAt: expiryFromChoice('90d'),
    createdByUserId: user.id,
  });

  return [
    `Demo workspace "${workspace.name}" created with ${COMPANIES.length} companies, ${PEOPLE_COUNT} people and ` +
      `${COMPANIES.length * OPPORTUNITIES_PER_COMPANY} opportunities.`,
    'These credentials are shown only this once:',
    `  Base URL:  ${publicUrl}`,
    `  Sign in:   ${publicUrl}/login`,
    `  E-mail:    ${DEMO_ADMIN_EMAIL}`,
    `  Password:  ${password}`,
    `  API key:   ${key.secret}  (role ${key.role}, expires ${key.expiresAt})`,
    'Try it:',
    `  curl -H "Authorization: Bearer ${key.secret}" "${publicUrl}/rest/companies?limit=5"`,
  ].join('\n');
}
