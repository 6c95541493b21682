import { RECORD_OBJECTS, type ObjectPermissions } from '#database/entities/role.entity.js';
import { RoleViews, type DeliveryRole } from '#webhooks/role-view.js';

/**
 * `npm run build --silent && node dist/bench/webhook-role-view.js`: what cutting an event to
 * the webhook's role costs a delivery job, per event (docs/webhooks.md "Who a webhook
 * delivers as"). A job makes one RoleViews and sends up to 16 events; a role that reads
 * everything passes the stored body on unparsed, a restricted one parses, cuts and
 * re-serialises it. CPU only, no database: the role comes with the claim's own statement.
 */
const EVENTS_PER_JOB = 16;
const JOBS = Number(process.env.BENCH_JOBS) || 20_000;

// Every object, the workspace's own ones included through "*", as the built-in roles hold them.
const objects = Object.fromEntries(
  [...RECORD_OBJECTS, '*'].map((o) => [o, { read: true, create: true, update: true, delete: true }]),
) as ObjectPermissions;
const roles: [string, DeliveryRole][] = [
  ['reads everything', { name: 'Admin', objects, fields: {} }],
  [
    'hides 2 company fields',
    {
      name: 'Restricted',
      objects,
      fields: { companies: { domainName: { read: false, update: false }, notes: { read: false, update: false } } },
    },
  ],
];
const body = JSON.stringify({
  id: '8b72ae1a-fb1c-4107-9a81-1f6480084524',
  type: 'company.updated',
  workspaceId: '87d74f26-65bd-4d04-9929-3173ed61fada',
  occurredAt: '2026-11-23T13:35:39.550Z',
  data: {
    record: {
      id: 'c8676ff9-ac90-44a6-a8c6-57709fce8f07',
      name: 'Acme Corp',
      domainName: { primaryLinkUrl: 'acme.com', primaryLinkLabel: null, secondaryLinks: [] },
      notes: 'x'.repeat(200),
      revenue: 12_000_000,
      createdAt: '2026-11-23T13:35:39.191Z',
      updatedAt: '2026-11-23T13:40:02.110Z',
      deletedAt: null,
    },
    previous: { name: 'Acme', notes: 'y' },
  },
});

function jobs(role: DeliveryRole, n: number): void {
  for (let j = 0; j < n; j++) {
    const views = new RoleViews();
    for (let i = 0; i < EVENTS_PER_JOB; i++) views.shape('role', role, 'company.updated', body, 'companies');
  }
}

for (const [label, role] of roles) {
  jobs(role, 2_000);
  const started = process.hrtime.bigint();
  jobs(role, JOBS);
  const perEvent = Number(process.hrtime.bigint() - started) / JOBS / EVENTS_PER_JOB / 1000;
  process.stdout.write(
    `${label}: ${perEvent.toFixed(2)} µs per event (${body.length} B body, ${EVENTS_PER_JOB} events a job, ${JOBS} jobs)\n`,
  );
}
