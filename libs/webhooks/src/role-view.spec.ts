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
    expect(new RoleViews().shape('admin', everything, 'company.created', body)).toEqual({ body });
  });

  it('drops hidden fields from record and previous, keeping the order of the rest', () => {
    const body = event('company.updated', {
      record: { id: 'c1', name: 'Acme', domainName: { primaryLinkUrl: 'acme.com' }, notes: 'x', createdAt: 't' },
      previous: { notes: 'y' },
    });
    const shaped = new RoleViews().shape('r', restricted, 'company.updated', body);
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
    expect(views.shape('r', restricted, 'person.created', event('person.created', { record: { id: 'p1' } }))).toEqual({
      skipped: 'not sent: the role "Restricted" cannot read people',
    });
    expect(views.shape('r', restricted, 'import.completed', event('import.completed', { import: { object: 'people' } }))).toEqual({
      skipped: 'not sent: the role "Restricted" cannot read people',
    });
    const companies = event('import.completed', { import: { object: 'companies', created: 3 } });
    expect(views.shape('r', restricted, 'import.completed', companies)).toEqual({ body: companies });
    const older: DeliveryRole = { name: 'Older', objects: { companies: restricted.objects.companies } as ObjectPermissions, fields: null };
    expect(views.shape('o', older, 'opportunity.created', event('opportunity.created', { record: { id: 'd1' } })).skipped).toMatch(
      /cannot read opportunities/,
    );
  });

  it('sends a test event, which carries no record, to a role that reads nothing', () => {
    const blind: DeliveryRole = { name: 'Blind', objects: objects(() => false), fields: null };
    const test = event('webhook.test', { webhook: { id: 'h1', url: 'https://example.com/hook' } });
    expect(new RoleViews().shape('b', blind, 'webhook.test', test)).toEqual({ body: test });
    expect(new RoleViews().shape(null, null, 'webhook.test', test)).toEqual({ skipped: ROLE_DELETED });
  });

  it('sends nothing for a deleted role', () => {
    expect(new RoleViews().shape(null, null, 'company.created', event('company.created', { record: {} }))).toEqual({
      skipped: ROLE_DELETED,
    });
  });
});
