import { Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppError, BadInputError, ErrorCode } from '#errors/errors.js';
import { confirmDeleteFieldPage, dataModelPage, editFieldPage } from '../../views/settings/data-model.js';
import type { SettingsContext } from '../settings-context.js';
import { SettingsExceptionFilter } from '../settings-exception.filter.js';
import { CurrentSettings, Requires, SettingsGuard } from '../settings.guard.js';
import {
  editFieldBody,
  editFieldValues,
  newFieldBody,
  newFieldValues,
  pageMessages,
  type EditFieldValues,
  type FormBody,
} from './data-model.form.js';
import { DataModelService } from './data-model.service.js';

/** A refusal the page shows next to its form; anything else (404, 5xx) goes to the settings error page. */
const shown = (err: unknown): err is AppError => err instanceof AppError && err.status < 500 && err.status !== 404;

/**
 * /settings/data-model (DATA_MODEL): each object's built-in and custom fields; add a custom
 * field, edit one (label, description, options, "can be empty"), deactivate or reactivate
 * it, and delete an inactive one after typing its name.
 */
@Controller('settings/data-model')
@UseGuards(SettingsGuard)
@UseFilters(SettingsExceptionFilter)
@Requires('DATA_MODEL')
export class DataModelController {
  constructor(private readonly fields: DataModelService) {}

  @Get()
  async list(
    @CurrentSettings() ctx: SettingsContext,
    @Query('created') created: unknown,
    @Query('deleted') deleted: unknown,
    @Res() res: Response,
  ) {
    const fields = await this.fields.list(ctx);
    const added = fields.find((f) => f.id === created);
    const deletedLabel = typeof deleted === 'string' ? await this.fields.deletedLabel(ctx, deleted) : undefined;
    const notice = added
      ? `Field "${added.label}" (${added.object}.${added.name}) added.`
      : deletedLabel
        ? `Field ${deletedLabel} deleted, with its values.`
        : undefined;
    res.send(dataModelPage(ctx, { fields, notice }));
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
      res.status(err.status).send(dataModelPage(ctx, { fields: await this.fields.list(ctx), error, values }));
    }
  }

  @Get(':id')
  async edit(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Query('notice') notice: unknown, @Res() res: Response) {
    const notices: Record<string, string> = {
      saved: 'Saved.',
      deactivated: 'Deactivated: the field is hidden from the APIs; its values are kept.',
      reactivated: 'Reactivated: the field is back in the APIs, with its values.',
    };
    res.send(
      editFieldPage(ctx, { field: await this.fields.find(ctx, id), notice: typeof notice === 'string' ? notices[notice] : undefined }),
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
    res.send(confirmDeleteFieldPage(ctx, { field, values: field.isActive ? undefined : await this.fields.valuesHeld(ctx, field) }));
  }

  /** Deletes only when the form carries the field's name, typed: the confirmation works without JavaScript. */
  @Post(':id/delete')
  async delete(@CurrentSettings() ctx: SettingsContext, @Param('id') id: string, @Req() req: Request, @Res() res: Response) {
    const field = await this.fields.find(ctx, id);
    const typed = typeof req.body?.confirm === 'string' ? req.body.confirm.trim() : '';
    try {
      if (typed !== field.name)
        throw new BadInputError(ErrorCode.VALIDATION_FAILED, `confirm: type the field's name, ${field.name}, to delete it`);
      await this.fields.delete(ctx, id);
      res.redirect(303, `/settings/data-model?deleted=${id}#${field.object}`);
    } catch (err) {
      if (!shown(err)) throw err;
      const fresh = await this.fields.find(ctx, id);
      const values = fresh.isActive ? undefined : await this.fields.valuesHeld(ctx, fresh);
      // Still active (or active again): the page says so in its own words instead of the API's.
      res.status(err.status).send(confirmDeleteFieldPage(ctx, { field: fresh, values, error: err.messages.join(' ') }));
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
    res.status(err.status).send(editFieldPage(ctx, { field, values, error: messages.join(' ') }));
  }
}
