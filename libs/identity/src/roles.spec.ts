import { permissionsBeyond, validateRoleInput, type RoleInput } from './roles.js';

const none = { read: false, create: false, update: false, delete: false };
const all = { read: true, create: true, update: true, delete: true };
const input = (over: Partial<RoleInput> = {}): RoleInput => ({
  name: ' Importer ',
  description: '',
  objectPermissions: { companies: { ...none, read: true }, people: { ...none } },
  settingsPermissions: [],
  assignableToUsers: false,
  assignableToApiKeys: true,
  ...over,
});

describe('validateRoleInput', () => {
  it('trims the name and fills every object and action', () => {
    const role = validateRoleInput(input({ objectPermissions: { companies: { read: true } } } as never));
    expect(role.name).toBe('Importer');
    expect(role.objectPermissions).toEqual({ companies: { ...none, read: true }, people: none });
  });

  it('reports every problem at once', () => {
    expect(() =>
      validateRoleInput(
        input({
          name: '',
          objectPermissions: { companies: { ...none, delete: true }, people: none },
          settingsPermissions: ['BILLING' as never],
        }),
      ),
    ).toThrow(/name must be 1 to 50 characters; companies: create, update and delete need read; settingsPermissions: unknown BILLING/);
  });

  it('keeps settings permissions in their canonical order, without duplicates', () => {
    expect(validateRoleInput(input({ settingsPermissions: ['ROLES', 'API_KEYS_AND_WEBHOOKS', 'ROLES'] })).settingsPermissions).toEqual([
      'API_KEYS_AND_WEBHOOKS',
      'ROLES',
    ]);
  });
});

describe('permissionsBeyond', () => {
  const admin = {
    name: 'Admin',
    objectPermissions: { companies: all, people: all },
    settingsPermissions: ['API_KEYS_AND_WEBHOOKS', 'WORKSPACE_MEMBERS', 'ROLES'] as never,
  };
  const keeper = {
    name: 'Keeper',
    objectPermissions: { companies: { ...none, read: true }, people: none },
    settingsPermissions: ['API_KEYS_AND_WEBHOOKS'] as never,
  };

  it('lists what the target allows and the actor does not', () => {
    expect(permissionsBeyond(keeper, admin, true)).toEqual([
      'companies.create',
      'companies.update',
      'companies.delete',
      'people.read',
      'people.create',
      'people.update',
      'people.delete',
      'WORKSPACE_MEMBERS',
      'ROLES',
    ]);
    expect(permissionsBeyond(admin, keeper, true)).toEqual([]);
  });

  it('ignores settings permissions for keys and apps', () => {
    const readerWithSettings = { ...keeper, settingsPermissions: ['ROLES'] as never };
    expect(permissionsBeyond(keeper, readerWithSettings, false)).toEqual([]);
    expect(permissionsBeyond(keeper, readerWithSettings, true)).toEqual(['ROLES']);
  });
});
