import type { ObjectService } from '../records/object-service.js';
import { serviceFor } from '../records/object-service.js';

/** The companies' service: the generic ObjectService for `companies` (its provider class). */
export const CompaniesService = serviceFor('companies');
export type CompaniesService = ObjectService;
