import type { ObjectService } from '#records/service/object-service.js';
import { serviceFor } from '#records/service/object-service.js';

/** The companies' service: the generic ObjectService for `companies` (its provider class). */
export const CompaniesService = serviceFor('companies');
export type CompaniesService = ObjectService;
