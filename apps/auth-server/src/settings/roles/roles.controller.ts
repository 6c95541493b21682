import { Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { RoleInput } from '#identity/roles.js';
import {
  RECORD_ACTIONS,
  RECORD_OBJECTS,
  type FieldPermissions,
  type ObjectPermissions,
  type SettingsPermission,
} from '#database/entities/index.js';
import { AppError } from '#errors/errors.js';
import { deleteRolePage, roleFormPage, rolesPage } from '../../views/settings/roles.js';
import type { SettingsContext } from '../settings-context.js';
import { SettingsExceptionFilter } from '../settings-exception.filter.js';
import { CurrentSettings, Requires, SettingsGuard } from '../settings.guard.js';
import { RolesService } from './roles.service.js';

/** /settings/roles: roles with their permissions; create, edit and delete custom roles (ROLES). */
@Controller('settings/roles')
@UseGuards(SettingsGuard)
@UseFilters(SettingsExceptionFilter)
@Requires('ROLES')
export class RolesController {
  constructor(private readonly roles: RolesService) {}

  @Get()
  async list(
    @CurrentSettings() ctx: SettingsContext,
    @Query('saved') saved: unknown,
    @Query('deleted') deleted: unknown,
    @Res() res: Response,
  ) {
    const [roles, objects] = await Promise.all([this.roles.list(ctx), this.roles.objects(ctx)]);
    const savedRole = roles.find((r) => r.role.id === saved)?.role;
    const deletedName = typeof deleted === 'string' ? await this.roles.deletedName(ctx, deleted) : undefined;
    const notice = savedRole ? `Role "${savedRole.name}" saved.` : deletedName ? `Role "${deletedName}" deleted.` : undefined;
    res.send(rolesPage(ctx, { roles, objects, notice }));
  }

  /** The workspace's objects and the fields the form lists for each. */
  private async formObjects(ctx: SettingsContext) {
    const objects = await this.roles.objects(ctx);
    return { objects, fields: await this.roles.formFields(ctx, objects) };
  }

  @Get('new')
  async form(@CurrentSettings() ctx: SettingsContext, @Res() res: Response) {
    res.send(roleFormPage(ctx, await this.formObjects(ctx)));
  }

  @Post()
  async create(@CurrentSettings() ctx: SettingsContext, @Req() req: Request, @Res() res: Response) {
    const values = roleFromForm(req.body);
    try {
      const role = await this.roles.create(ctx, values);
      res.redirect(303, `/settings/roles?saved=${role.id}`);
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      res.status(err.status).send(roleFormPage(ctx, { values, error: err.messages.join(' '), ...(await this.formObjects(ctx)) }));
    }
  }

  @Get(':id')
  async edit(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Res() res: Response) {
    const { role, usage } = await this.roles.find(ctx, id);
    res.send(roleFormPage(ctx, { role, usage, ...(await this.formObjects(ctx)) }));
  }

  @Post(':id')
  async update(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Req() req: Request, @Res() res: Response) {
    const values = roleFromForm(req.body);
    try {
      const role = await this.roles.update(ctx, id, values);
      res.redirect(303, `/settings/roles?saved=${role.id}`);
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500 || err.status === 404) throw err;
      const { role, usage } = await this.roles.find(ctx, id);
      res
        .status(err.status)
        .send(roleFormPage(ctx, { role, usage, values, error: err.messages.join(' '), ...(await this.formObjects(ctx)) }));
    }
  }

  @Get(':id/delete')
  async confirmDelete(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Res() res: Response) {
    const { role, usage } = await this.roles.find(ctx, id);
    if (!role.isEditable) return res.redirect(303, `/settings/roles/${role.id}`);
    res.send(deleteRolePage(ctx, { role, usage }));
  }

  @Post(':id/delete')
  async delete(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Res() res: Response) {
    const role = await this.roles.delete(ctx, id);
    res.redirect(303, `/settings/roles?deleted=${role.id}`);
  }
}

const list = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : value === undefined ? [] : [String(value)]);

/** At most this many fields are read from one form (more than any object has). */
const MAX_FORM_FIELDS = 2000;
/** At most this many objects are read from one form (more than a workspace has: 3 standard, 50 of its own, and "*"). */
const MAX_FORM_OBJECTS = 100;

/**
 * The form's checkboxes: `permissions` = "companies.read" …, `settings` = permission names, the two
 * flags; object permissions for the standard objects and every other object the form listed
 * (`objectsShown`: the workspace's own objects and `*`, "Other objects", so saving a role keeps
 * what it allows there); field permissions from `fieldsShown` (every field the form listed)
 * with `fieldRead` and `fieldUpdate` (those left checked).
 */
export function roleFromForm(body: Record<string, unknown> | undefined): RoleInput {
  const b = body ?? {};
  const granted = new Set(list(b.permissions));
  const objects = [...new Set([...RECORD_OBJECTS, ...list(b.objectsShown).slice(0, MAX_FORM_OBJECTS)])];
  // A Map, then fromEntries: a posted "__proto__" stays a key (and is refused), never a prototype.
  const objectPermissions = Object.fromEntries(
    new Map(objects.map((o) => [o, Object.fromEntries(RECORD_ACTIONS.map((a) => [a, granted.has(`${o}.${a}`)]))])),
  ) as ObjectPermissions;
  const readable = new Set(list(b.fieldRead));
  const updatable = new Set(list(b.fieldUpdate));
  // Maps, then fromEntries: a posted "__proto__" stays a key (and is refused), never a prototype.
  const byObject = new Map<string, [string, { read: boolean; update: boolean }][]>();
  for (const shown of list(b.fieldsShown).slice(0, MAX_FORM_FIELDS)) {
    const dot = shown.indexOf('.');
    const read = readable.has(shown);
    const update = updatable.has(shown);
    if (dot < 0 || (read && update)) continue;
    const object = shown.slice(0, dot);
    byObject.set(object, [...(byObject.get(object) ?? []), [shown.slice(dot + 1), { read, update }]]);
  }
  const fieldPermissions = Object.fromEntries(
    [...byObject].map(([object, rules]) => [object, Object.fromEntries(rules)]),
  ) as FieldPermissions;
  return {
    name: String(b.name ?? ''),
    description: String(b.description ?? ''),
    objectPermissions,
    fieldPermissions,
    settingsPermissions: list(b.settings) as SettingsPermission[],
    assignableToUsers: b.assignableToUsers === 'on',
    assignableToApiKeys: b.assignableToApiKeys === 'on',
  };
}
