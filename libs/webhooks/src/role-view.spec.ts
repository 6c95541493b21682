import { RECORD_OBJECTS, type ObjectPermissions } from '#database/entities/role.entity.js';
import { ROLE_DELETED, RoleViews, type DeliveryRole } from './role-view.js';

const objects = (read: (object: string) => boolean): ObjectPermissions =>
  Object.fromEntries(RECORD_OBJECTS.map((o) => [o, { read: read(o), create: false, update: false, delete: false }])) as ObjectPermissions;
const event = (type: string, data: object) =>
  JSON.stringify({ id: 'e1', type, workspaceId: 'w1', occurredAt: '2026-11-29T00:00:00.000Z', data });

describe('RoleViews (what a webhook delivering as a role sends)', () => {
  const everything: DeliveryRole = { name: 'Admin', objects: objects(() => true), fields: {} };
  const restricted: DeliveryRole = {
    name: 'Restricted',
    objects: objects((o) => o !== 'people'),
    fields: { companies: { domainName: { read: false, update: false }, notes: { read: false, update: false } } },
  };

  it('sends the stored body as it is, unparsed, for a role that reads everything', () => {
    const body = '{"id":"e1","type":"company.created","data":{"record":{"tags":["a", "b"]}}}';
    expect(new RoleViews().shape('admin', everything, 'company.created', body, 'companies')).toEqual({ body });
  });

  it('drops hidden fields from record and previous, keeping the order of the rest', () => {
    const body = event('company.updated', {
      record: { id: 'c1', name: 'Acme', domainName: { primaryLinkUrl: 'acme.com' }, notes: 'x', createdAt: 't' },
      previous: { notes: 'y' },
    });
    const shaped = new RoleViews().shape('r', restricted, 'company.updated', body, 'companies');
    expect(shaped.skipped).toBeUndefined();
    expect(JSON.parse((shaped as { body: string }).body)).toEqual({
      id: 'e1',
      type: 'company.updated',
      workspaceId: 'w1',
      occurredAt: '2026-11-29T00:00:00.000Z',
      data: { record: { id: 'c1', name: 'Acme', createdAt: 't' }, previous: {} },
    });
    expect(Object.keys(JSON.parse((shaped as { body: string }).body).data.record)).toEqual(['id', 'name', 'createdAt']);
  });

  it('skips the events of objects the role cannot read, import.completed by its object, and a role left out of an object', () => {
    const views = new RoleViews();
    expect(views.shape('r', restricted, 'person.created', event('person.created', { record: { id: 'p1' } }), 'people')).toEqual({
      skipped: 'not sent: the role "Restricted" cannot read people',
    });
    expect(views.shape('r', restricted, 'import.completed', event('import.completed', { import: { object: 'people' } }), null)).toEqual({
      skipped: 'not sent: the role "Restricted" cannot read people',
    });
    const companies = event('import.completed', { import: { object: 'companies', created: 3 } });
    expect(views.shape('r', restricted, 'import.completed', companies, null)).toEqual({ body: companies });
    const older: DeliveryRole = { name: 'Older', objects: { companies: restricted.objects.companies } as ObjectPermissions, fields: null };
    expect(
      views.shape('o', older, 'opportunity.created', event('opportunity.created', { record: { id: 'd1' } }), 'opportunities').skipped,
    ).toMatch(/cannot read opportunities/);
  });

  it('sends a test event, which carries no record, to a role that reads nothing', () => {
    const blind: DeliveryRole = { name: 'Blind', objects: objects(() => false), fields: null };
    const test = event('webhook.test', { webhook: { id: 'h1', url: 'https://example.com/hook' } });
    expect(new RoleViews().shape('b', blind, 'webhook.test', test, null)).toEqual({ body: test });
    expect(new RoleViews().shape(null, null, 'webhook.test', test, null)).toEqual({ skipped: ROLE_DELETED });
  });

  it('sends nothing for a deleted role', () => {
    expect(new RoleViews().shape(null, null, 'company.created', event('company.created', { record: {} }), 'companies')).toEqual({
      skipped: ROLE_DELETED,
    });
  });

  it('a workspace\'s own object: read through the role\'s entry for it or its "*" entry, cut to its hidden fields; gone, never sent', () => {
    const views = new RoleViews();
    const ticket = event('ticket.updated', { record: { id: 't1', name: 'Printer', secret: 's' }, previous: { secret: 'r' } });
    // Every standard object, no entry for tickets and no "*": tickets are not this role's.
    expect(views.shape('e', everything, 'ticket.updated', ticket, 'tickets')).toEqual({
      skipped: 'not sent: the role "Admin" cannot read tickets',
    });
    const builtIn: DeliveryRole = { name: 'Member', objects: { ...everything.objects, '*': everything.objects.companies }, fields: {} };
    expect(views.shape('m', builtIn, 'ticket.updated', ticket, 'tickets')).toEqual({ body: ticket });
    const hidden: DeliveryRole = {
      name: 'No secret',
      objects: { tickets: everything.objects.companies } as ObjectPermissions,
      fields: { tickets: { secret: { read: false, update: false } } },
    };
    expect(JSON.parse((views.shape('h', hidden, 'ticket.updated', ticket, 'tickets') as { body: string }).body).data).toEqual({
      record: { id: 't1', name: 'Printer' },
      previous: {},
    });
    expect(views.shape('m', builtIn, 'ticket.updated', ticket, null).skipped).toMatch(/ticket is no longer an active object/);
  });
});
