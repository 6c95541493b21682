import { Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppError, BadInputError, ErrorCode } from '#errors/errors.js';
import {
  confirmDeleteFieldPage,
  confirmDeleteObjectPage,
  dataModelPage,
  editFieldPage,
  editObjectPage,
  sectionId,
} from '../../views/settings/data-model.js';
import type { SettingsContext } from '../settings-context.js';
import { SettingsExceptionFilter } from '../settings-exception.filter.js';
import { CurrentSettings, Requires, SettingsGuard } from '../settings.guard.js';
import {
  editFieldBody,
  editFieldValues,
  editObjectBody,
  editObjectValues,
  newFieldBody,
  newFieldValues,
  newObjectBody,
  newObjectValues,
  pageMessages,
  type EditFieldValues,
  type EditObjectValues,
  type FormBody,
  type NewFieldValues,
  type NewObjectValues,
} from './data-model.form.js';
import { DataModelService } from './data-model.service.js';

/** A refusal the page shows next to its form; anything else (404, 5xx) goes to the settings error page. */
const shown = (err: unknown): err is AppError => err instanceof AppError && err.status < 500 && err.status !== 404;

/** The data model page with what a refused form had (docs/settings.md). */
async function listPage(
  service: DataModelService,
  ctx: SettingsContext,
  o: { notice?: string; error?: string; values?: NewFieldValues; objectError?: string; objectValues?: NewObjectValues } = {},
): Promise<string> {
  const [objects, fields] = await Promise.all([service.objects(ctx), service.list(ctx)]);
  return dataModelPage(ctx, { objects, fields, ...o });
}

/**
 * /settings/data-model/objects (DATA_MODEL): create an object of the workspace's own, change
 * its labels, description and label identifier, deactivate or reactivate it, and delete an
 * inactive one after typing its plural name. Registered before DataModelController, whose
 * `:id` would otherwise take `objects`.
 */
@Controller('settings/data-model/objects')
@UseGuards(SettingsGuard)
@UseFilters(SettingsExceptionFilter)
@Requires('DATA_MODEL')
export class DataModelObjectsController {
  constructor(private readonly model: DataModelService) {}

  @Post()
  async create(@CurrentSettings() ctx: SettingsContext, @Req() req: Request, @Res() res: Response) {
    const values = newObjectValues(req.body);
    try {
      const object = await this.model.createObject(ctx, newObjectBody(values));
      res.redirect(303, `/settings/data-model?objectCreated=${object.id}#${sectionId(object)}`);
    } catch (err) {
      if (!shown(err)) throw err;
      res.status(err.status).send(await listPage(this.model, ctx, { objectError: err.messages.join(' '), objectValues: values }));
    }
  }

  @Get(':id')
  async edit(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Query('notice') notice: unknown, @Res() res: Response) {
    const notices: Record<string, string> = {
      saved: 'Saved.',
      deactivated: 'Deactivated: the object is hidden from the APIs; its records are kept.',
      reactivated: 'Reactivated: the object is back in the APIs, with its records.',
    };
    res.send(await this.page(ctx, id, { notice: typeof notice === 'string' ? notices[notice] : undefined }));
  }

  @Post(':id')
  async update(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Req() req: Request, @Res() res: Response) {
    const object = await this.model.findObject(ctx, id);
    const values = editObjectValues(req.body);
    try {
      const body = editObjectBody(object, values);
      if (Object.keys(body).length) await this.model.updateObject(ctx, id, body);
      res.redirect(303, `/settings/data-model/objects/${id}?notice=saved`);
    } catch (err) {
      if (!shown(err)) throw err;
      res.status(err.status).send(await this.page(ctx, id, { error: err.messages.join(' '), values }));
    }
  }

  /** Deactivate (`active=false`) or reactivate (`active=true`): the toggle of the object's page. */
  @Post(':id/active')
  async setActive(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Req() req: Request, @Res() res: Response) {
    const isActive = req.body?.active === 'true';
    try {
      await this.model.updateObject(ctx, id, { isActive });
      res.redirect(303, `/settings/data-model/objects/${id}?notice=${isActive ? 'reactivated' : 'deactivated'}`);
    } catch (err) {
      if (!shown(err)) throw err;
      res.status(err.status).send(await this.page(ctx, id, { error: err.messages.join(' ') }));
    }
  }

  @Get(':id/delete')
  async confirmDelete(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Res() res: Response) {
    const object = await this.model.findObject(ctx, id);
    res.send(confirmDeleteObjectPage(ctx, { object, records: object.isActive ? undefined : await this.model.recordCount(ctx, object) }));
  }

  /** Deletes only when the form carries the object's plural name, typed: the confirmation works without JavaScript. */
  @Post(':id/delete')
  async delete(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Req() req: Request, @Res() res: Response) {
    const object = await this.model.findObject(ctx, id);
    const typed = typeof req.body?.confirm === 'string' ? req.body.confirm.trim() : '';
    try {
      if (typed !== object.namePlural)
        throw new BadInputError(ErrorCode.VALIDATION_FAILED, `confirm: type the object's plural name, ${object.namePlural}, to delete it`);
      await this.model.deleteObject(ctx, id);
      res.redirect(303, `/settings/data-model?objectDeleted=${id}`);
    } catch (err) {
      if (!shown(err)) throw err;
      const fresh = await this.model.findObject(ctx, id);
      const records = fresh.isActive ? undefined : await this.model.recordCount(ctx, fresh);
      res.status(err.status).send(confirmDeleteObjectPage(ctx, { object: fresh, records, error: err.messages.join(' ') }));
    }
  }

  /** The object's page as it is now, with a notice, or a refusal and what the form had. */
  private async page(ctx: SettingsContext, id: string, o: { notice?: string; error?: string; values?: EditObjectValues }): Promise<string> {
    const object = await this.model.findObject(ctx, id);
    // A standard object's settings are the service's: it has no page here.
    if (!object.isCustom)
      throw new AppError(404, ErrorCode.NOT_FOUND, [`${object.namePlural} is a standard object; it has no settings here`]);
    return editObjectPage(ctx, { object, identifiers: await this.model.identifiers(ctx, object), ...o });
  }
}

/**
 * /settings/data-model (DATA_MODEL): each object (standard or the workspace's own) with its
 * built-in and custom fields; add a custom field, edit one (label, description, options, "can
 * be empty"), deactivate or reactivate it, and delete an inactive one after typing its name.
 */
@Controller('settings/data-model')
@UseGuards(SettingsGuard)
@UseFilters(SettingsExceptionFilter)
@Requires('DATA_MODEL')
export class DataModelController {
  constructor(private readonly fields: DataModelService) {}

  @Get()
  async list(@CurrentSettings() ctx: SettingsContext, @Query() query: Record<string, unknown>, @Res() res: Response) {
    const [objects, fields] = await Promise.all([this.fields.objects(ctx), this.fields.list(ctx)]);
    const { created, deleted, objectCreated, objectDeleted } = query;
    const added = fields.find((f) => f.id === created);
    const madeObject = objects.find((o) => o.id === objectCreated);
    const deletedLabel = typeof deleted === 'string' ? await this.fields.deletedLabel(ctx, deleted) : undefined;
    const deletedObject = typeof objectDeleted === 'string' ? await this.fields.deletedObjectName(ctx, objectDeleted) : undefined;
    const notice = added
      ? `Field "${added.label}" (${added.object}.${added.name}) added.`
      : deletedLabel
        ? `Field ${deletedLabel} deleted, with its values.`
        : madeObject
          ? `Object "${madeObject.labelPlural}" (${madeObject.namePlural}) created, with a TEXT field name that names its records.`
          : deletedObject
            ? `Object ${deletedObject} deleted; its records are being removed in the background.`
            : undefined;
    res.send(dataModelPage(ctx, { objects, fields, notice }));
  }

  @Post()
  async create(@CurrentSettings() ctx: SettingsContext, @Req() req: Request, @Res() res: Response) {
    const values = newFieldValues(req.body);
    let form: FormBody | undefined;
    try {
      form = newFieldBody(values);
      const field = await this.fields.create(ctx, form.body);
      res.redirect(303, `/settings/data-model?created=${field.id}#field-${field.id}`);
    } catch (err) {
      if (!shown(err)) throw err;
      const error = pageMessages(err.messages, form?.optionNames ?? [], form?.optionValues).join(' ');
      res.status(err.status).send(await listPage(this.fields, ctx, { error, values }));
    }
  }

  @Get(':id')
  async edit(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Query('notice') notice: unknown, @Res() res: Response) {
    const notices: Record<string, string> = {
      saved: 'Saved.',
      deactivated: 'Deactivated: the field is hidden from the APIs; its values are kept.',
      reactivated: 'Reactivated: the field is back in the APIs, with its values.',
    };
    const field = await this.fields.find(ctx, id);
    res.send(
      editFieldPage(ctx, {
        object: await this.fields.objectOf(ctx, field),
        field,
        notice: typeof notice === 'string' ? notices[notice] : undefined,
      }),
    );
  }

  @Post(':id')
  async update(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Req() req: Request, @Res() res: Response) {
    const field = await this.fields.find(ctx, id);
    const values = editFieldValues(field, req.body);
    let form: FormBody | undefined;
    try {
      form = editFieldBody(field, values);
      if (Object.keys(form.body).length) await this.fields.update(ctx, id, form.body);
      res.redirect(303, `/settings/data-model/${id}?notice=saved`);
    } catch (err) {
      if (!shown(err)) throw err;
      await this.showEditError(ctx, res, id, err, pageMessages(err.messages, form?.optionNames ?? [], form?.optionValues), values);
    }
  }

  /** Deactivate (`active=false`) or reactivate (`active=true`): the toggle of the field's page. */
  @Post(':id/active')
  async setActive(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Req() req: Request, @Res() res: Response) {
    const isActive = req.body?.active === 'true';
    try {
      await this.fields.update(ctx, id, { isActive });
      res.redirect(303, `/settings/data-model/${id}?notice=${isActive ? 'reactivated' : 'deactivated'}`);
    } catch (err) {
      if (!shown(err)) throw err;
      await this.showEditError(ctx, res, id, err, err.messages);
    }
  }

  @Get(':id/delete')
  async confirmDelete(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Res() res: Response) {
    const field = await this.fields.find(ctx, id);
    const object = await this.fields.objectOf(ctx, field);
    res.send(confirmDeleteFieldPage(ctx, { object, field, values: field.isActive ? undefined : await this.fields.valuesHeld(ctx, field) }));
  }

  /** Deletes only when the form carries the field's name, typed: the confirmation works without JavaScript. */
  @Post(':id/delete')
  async delete(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Req() req: Request, @Res() res: Response) {
    const field = await this.fields.find(ctx, id);
    const object = await this.fields.objectOf(ctx, field);
    const typed = typeof req.body?.confirm === 'string' ? req.body.confirm.trim() : '';
    try {
      if (typed !== field.name)
        throw new BadInputError(ErrorCode.VALIDATION_FAILED, `confirm: type the field's name, ${field.name}, to delete it`);
      await this.fields.delete(ctx, id);
      res.redirect(303, `/settings/data-model?deleted=${id}#${sectionId(object)}`);
    } catch (err) {
      if (!shown(err)) throw err;
      const fresh = await this.fields.find(ctx, id);
      const values = fresh.isActive ? undefined : await this.fields.valuesHeld(ctx, fresh);
      // Still active (or active again): the page says so in its own words instead of the API's.
      res.status(err.status).send(confirmDeleteFieldPage(ctx, { object, field: fresh, values, error: err.messages.join(' ') }));
    }
  }

  /** The field's page again, as it is now, with the refusal and what the form had. */
  private async showEditError(
    ctx: SettingsContext,
    res: Response,
    id: string,
    err: AppError,
    messages: string[],
    values?: EditFieldValues,
  ) {
    const field = await this.fields.find(ctx, id);
    res
      .status(err.status)
      .send(editFieldPage(ctx, { object: await this.fields.objectOf(ctx, field), field, values, error: messages.join(' ') }));
  }
}
