import type { Principal } from './principal.js';
import { can } from './principal.js';
import { roleThroughScopes, scopeRefusal, scopesOf } from './scopes.js';

/** The built-in Admin as stored: every action on every object, `destroy` too, and every settings permission. */
const admin: Principal['role'] = {
  id: 'r',
  name: 'Admin',
  objectPermissions: {
    companies: { read: true, create: true, update: true, delete: true, destroy: true },
    '*': { read: true, create: true, update: true, delete: true, destroy: true },
  },
  settingsPermissions: ['API_KEYS_AND_WEBHOOKS', 'WORKSPACE_MEMBERS', 'ROLES', 'DATA_MODEL', 'VAULT'],
  fieldPermissions: { companies: { name: { read: true, update: false } } },
};
const viewer: Principal['role'] = {
  ...admin,
  name: 'Viewer',
  objectPermissions: { '*': { read: true, create: false, update: false, delete: false } },
  settingsPermissions: [],
};

const through = (role: Principal['role'], scope: string) => ({ role: roleThroughScopes(role, scopesOf(scope)) });
const allowed = (role: Principal['role'], scope: string, object: string) =>
  (['read', 'create', 'update', 'delete', 'destroy'] as const).filter((action) => can(through(role, scope), object, action));

describe('roles through OAuth scopes', () => {
  it('api keeps the role as it is (the same object)', () => {
    expect(roleThroughScopes(admin, scopesOf('api profile'))).toBe(admin);
  });

  it('each narrow scope keeps only its actions, on named objects and on "*" alike', () => {
    for (const object of ['companies', 'tickets']) {
      expect(allowed(admin, 'records:read', object)).toEqual(['read']);
      expect(allowed(admin, 'records:write', object)).toEqual(['create', 'update']);
      expect(allowed(admin, 'records:delete', object)).toEqual(['delete', 'destroy']);
      expect(allowed(admin, 'records:read records:write records:delete', object)).toEqual([
        'read',
        'create',
        'update',
        'delete',
        'destroy',
      ]);
      expect(allowed(admin, 'data_model:write', object)).toEqual([]);
      expect(allowed(admin, 'profile', object)).toEqual([]);
    }
  });

  it('keeps DATA_MODEL for data_model:write only; the vault and every other settings permission need api', () => {
    expect(through(admin, 'data_model:write records:read records:write records:delete').role.settingsPermissions).toEqual(['DATA_MODEL']);
    expect(through(admin, 'records:read').role.settingsPermissions).toEqual([]);
  });

  it('never adds what the role lacks', () => {
    expect(allowed(viewer, 'records:read records:write records:delete', 'companies')).toEqual(['read']);
    expect(through(viewer, 'data_model:write').role.settingsPermissions).toEqual([]);
  });

  it('leaves field permissions as the role has them', () => {
    expect(through(admin, 'records:read').role.fieldPermissions).toEqual(admin.fieldPermissions);
  });

  it('reads the claim as space-separated names only', () => {
    expect([...scopesOf('records:read  profile')]).toEqual(['records:read', 'profile']);
    expect([...scopesOf(undefined)]).toEqual([]);
    expect([...scopesOf(['api'])]).toEqual([]);
  });

  it('names the missing scope for tokens, and leaves API keys and tokens holding it to the role', () => {
    expect(scopeRefusal({ scopes: ['records:read'] }, 'records:write', 'create on companies')?.message).toBe(
      "The access token's scopes (records:read) do not allow create on companies; it needs the scope records:write",
    );
    expect(scopeRefusal({ scopes: ['records:write'] }, 'records:write', 'create on companies')).toBeUndefined();
    expect(scopeRefusal({}, 'records:write', 'create on companies')).toBeUndefined();
  });
});
