import type { ObjectService } from '#records/service/object-service.js';
import { serviceFor } from '#records/service/object-service.js';

/** The people's service: the generic ObjectService for `people` (its provider class). */
export const PeopleService = serviceFor('people');
export type PeopleService = ObjectService;
