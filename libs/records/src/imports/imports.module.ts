import { Module } from '@nestjs/common';
import { RecordsModule } from '../service/records.module.js';
import { ImportsService } from './imports.service.js';

/**
 * Imports (docs/rest.md "Imports") on the records layer, for every app that takes or shows
 * them: the records API's /rest/imports, the settings pages, the CLI. The app that runs
 * imports adds ImportsWorker to its providers.
 */
@Module({ imports: [RecordsModule], providers: [ImportsService], exports: [RecordsModule, ImportsService] })
export class ImportsModule {}
