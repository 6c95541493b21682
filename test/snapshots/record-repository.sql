-- page: people, first page
SELECT NULL AS id, NULL AS first_name, NULL AS last_name, NULL AS primary_email, NULL AS additional_emails, NULL AS company_id, NULL AS created_at, NULL AS updated_at, NULL AS deleted_at, coalesce(rc.live_count, 0) AS __live_count, coalesce(rc.version, 0) AS __version, false AS __other_side FROM (SELECT sum(live_count)::bigint AS live_count, sum(version)::bigint AS version FROM record_counts WHERE workspace_id = $1 AND object = $2) rc UNION ALL (SELECT t.id, t.first_name, t.last_name, t.primary_email, t.additional_emails, t.company_id, t.created_at, t.updated_at, t.deleted_at, NULL, NULL, NULL FROM people t WHERE t.workspace_id = $1 AND t.deleted_at IS NULL ORDER BY t.created_at ASC NULLS FIRST, t.id ASC LIMIT 21);

-- page: people, filtered, after a cursor
SELECT NULL AS id, NULL AS first_name, NULL AS last_name, NULL AS primary_email, NULL AS additional_emails, NULL AS company_id, NULL AS created_at, NULL AS updated_at, NULL AS deleted_at, coalesce(rc.live_count, 0) AS __live_count, coalesce(rc.version, 0) AS __version, (SELECT 1 FROM people t WHERE t.workspace_id = $1 AND t.deleted_at IS NULL AND (t.first_name = $2::text AND EXISTS (SELECT 1 FROM companies r WHERE r.workspace_id = t.workspace_id AND r.deleted_at IS NULL AND r.id = t.company_id AND r.name = $3::text)) AND (t.created_at, t.id) <= ($6::timestamptz, $7::uuid) ORDER BY t.created_at DESC NULLS LAST, t.id DESC LIMIT 1) IS NOT NULL AS __other_side FROM (SELECT sum(live_count)::bigint AS live_count, sum(version)::bigint AS version FROM record_counts WHERE workspace_id = $1 AND object = $8) rc UNION ALL (SELECT t.id, t.first_name, t.last_name, t.primary_email, t.additional_emails, t.company_id, t.created_at, t.updated_at, t.deleted_at, NULL, NULL, NULL FROM people t WHERE t.workspace_id = $1 AND t.deleted_at IS NULL AND (t.first_name = $2::text AND EXISTS (SELECT 1 FROM companies r WHERE r.workspace_id = t.workspace_id AND r.deleted_at IS NULL AND r.id = t.company_id AND r.name = $3::text)) AND (t.created_at, t.id) > ($4::timestamptz, $5::uuid) ORDER BY t.created_at ASC NULLS FIRST, t.id ASC LIMIT 21);

-- page: tickets, first page
SELECT NULL AS id, NULL AS created_at, NULL AS updated_at, NULL AS deleted_at, NULL AS custom, coalesce(rc.live_count, 0) AS __live_count, coalesce(rc.version, 0) AS __version, false AS __other_side FROM (SELECT sum(live_count)::bigint AS live_count, sum(version)::bigint AS version FROM record_counts WHERE workspace_id = $1 AND object = $2) rc UNION ALL (SELECT t.id, t.created_at, t.updated_at, t.deleted_at, t.custom, NULL, NULL, NULL FROM custom_records t WHERE t.workspace_id = $1 AND t.object_id = '<object id>' AND t.deleted_at IS NULL ORDER BY t.created_at ASC NULLS FIRST, t.id ASC LIMIT 21);

-- page: tickets across their custom relation
SELECT NULL AS id, NULL AS created_at, NULL AS updated_at, NULL AS deleted_at, NULL AS custom, coalesce(rc.live_count, 0) AS __live_count, coalesce(rc.version, 0) AS __version, false AS __other_side FROM (SELECT sum(live_count)::bigint AS live_count, sum(version)::bigint AS version FROM record_counts WHERE workspace_id = $1 AND object = $3) rc UNION ALL (SELECT t.id, t.created_at, t.updated_at, t.deleted_at, t.custom, NULL, NULL, NULL FROM custom_records t WHERE t.workspace_id = $1 AND t.object_id = '<object id>' AND t.deleted_at IS NULL AND EXISTS (SELECT 1 FROM record_links l JOIN companies r ON r.workspace_id = l.workspace_id AND r.id = l.target_id WHERE l.workspace_id = t.workspace_id AND l.field_id = '<field id>' AND l.source_id = t.id AND r.workspace_id = t.workspace_id AND r.deleted_at IS NULL AND r.name = $2::text) ORDER BY t.created_at ASC NULLS FIRST, t.id ASC LIMIT 21);

-- page: companies across the inverse of a custom relation
SELECT NULL AS id, NULL AS name, NULL AS domain_primary_link_url, NULL AS domain_primary_link_label, NULL AS domain_secondary_links, NULL AS created_at, NULL AS updated_at, NULL AS deleted_at, coalesce(rc.live_count, 0) AS __live_count, coalesce(rc.version, 0) AS __version, false AS __other_side FROM (SELECT sum(live_count)::bigint AS live_count, sum(version)::bigint AS version FROM record_counts WHERE workspace_id = $1 AND object = $3) rc UNION ALL (SELECT t.id, t.name, t.domain_primary_link_url, t.domain_primary_link_label, t.domain_secondary_links, t.created_at, t.updated_at, t.deleted_at, NULL, NULL, NULL FROM companies t WHERE t.workspace_id = $1 AND t.deleted_at IS NULL AND EXISTS (SELECT 1 FROM record_links l JOIN custom_records r ON r.workspace_id = l.workspace_id AND r.id = l.source_id WHERE l.workspace_id = t.workspace_id AND l.field_id = '<field id>' AND l.target_id = t.id AND r.workspace_id = t.workspace_id AND r.object_id = '<object id>' AND r.deleted_at IS NULL AND (r.custom->>'name') = $2::text) ORDER BY t.created_at ASC NULLS FIRST, t.id ASC LIMIT 21);

-- count: people, filtered on deletedAt
SELECT count(*)::bigint AS n FROM people t WHERE t.workspace_id = $1 AND t.deleted_at IS NOT NULL;

-- count: tickets, filtered
SELECT count(*)::bigint AS n FROM custom_records t WHERE t.workspace_id = $1 AND t.object_id = '<object id>' AND t.deleted_at IS NULL AND (t.custom->>'name') = $2::text;

-- pagesByParent: people of companies, after a cursor
SELECT k.parent AS __parent, o.__other_side, p.* FROM unnest($2::uuid[]) AS k(parent) CROSS JOIN LATERAL (SELECT (SELECT 1 FROM people t WHERE t.workspace_id = $1 AND t.deleted_at IS NULL AND t.company_id = k.parent AND (t.created_at, t.id) <= ($5::timestamptz, $6::uuid) ORDER BY t.created_at DESC NULLS LAST, t.id DESC LIMIT 1) IS NOT NULL AS __other_side) o LEFT JOIN LATERAL ( SELECT t.id, t.first_name, t.last_name, t.primary_email, t.additional_emails, t.company_id, t.created_at, t.updated_at, t.deleted_at FROM people t WHERE t.workspace_id = $1 AND t.deleted_at IS NULL AND t.company_id = k.parent AND (t.created_at, t.id) > ($3::timestamptz, $4::uuid) ORDER BY t.created_at ASC NULLS FIRST, t.id ASC LIMIT $7) p ON true;

-- pagesByParent: tickets of companies, a custom relation, after a cursor
SELECT k.parent AS __parent, o.__other_side, p.* FROM unnest($2::uuid[]) AS k(parent) CROSS JOIN LATERAL (SELECT (SELECT 1 FROM custom_records t WHERE t.workspace_id = $1 AND t.object_id = '<object id>' AND t.deleted_at IS NULL AND t.id IN (SELECT l.source_id FROM record_links l WHERE l.workspace_id = $1 AND l.field_id = '<field id>' AND l.target_id = k.parent) AND (t.created_at, t.id) <= ($5::timestamptz, $6::uuid) ORDER BY t.created_at DESC NULLS LAST, t.id DESC LIMIT 1) IS NOT NULL AS __other_side) o LEFT JOIN LATERAL ( SELECT t.id, t.created_at, t.updated_at, t.deleted_at, t.custom FROM custom_records t WHERE t.workspace_id = $1 AND t.object_id = '<object id>' AND t.deleted_at IS NULL AND t.id IN (SELECT l.source_id FROM record_links l WHERE l.workspace_id = $1 AND l.field_id = '<field id>' AND l.target_id = k.parent) AND (t.created_at, t.id) > ($3::timestamptz, $4::uuid) ORDER BY t.created_at ASC NULLS FIRST, t.id ASC LIMIT $7) p ON true;

-- countsByParent: people of companies
SELECT t.company_id AS parent, count(*)::bigint AS n FROM people t WHERE t.workspace_id = $1 AND t.deleted_at IS NULL AND t.company_id = ANY($2::uuid[]) GROUP BY t.company_id;

-- countsByParent: tickets of companies
SELECT l.target_id AS parent, count(*)::bigint AS n FROM custom_records t JOIN record_links l ON l.workspace_id = t.workspace_id AND l.source_id = t.id WHERE t.workspace_id = $1 AND t.object_id = '<object id>' AND t.deleted_at IS NULL AND l.workspace_id = $1 AND l.field_id = '<field id>' AND l.target_id = ANY($2::uuid[]) GROUP BY l.target_id;

-- get: people
SELECT id, first_name, last_name, primary_email, additional_emails, company_id, created_at, updated_at, deleted_at FROM people WHERE workspace_id = $1 AND deleted_at IS NULL AND id = $2;

-- get: tickets
SELECT id, created_at, updated_at, deleted_at, custom FROM custom_records WHERE workspace_id = $1 AND object_id = '<object id>' AND deleted_at IS NULL AND id = $2;

-- byIds: people
SELECT id, first_name, last_name, primary_email, additional_emails, company_id, created_at, updated_at, deleted_at FROM people WHERE workspace_id = $1 AND deleted_at IS NULL AND id = ANY($2::uuid[]);

-- byIds: tickets
SELECT id, created_at, updated_at, deleted_at, custom FROM custom_records WHERE workspace_id = $1 AND object_id = '<object id>' AND deleted_at IS NULL AND id = ANY($2::uuid[]);

-- children: people of companies
SELECT * FROM ( SELECT t.id, t.first_name, t.last_name, t.primary_email, t.additional_emails, t.company_id, t.created_at, t.updated_at, t.deleted_at, row_number() OVER (PARTITION BY t.company_id ORDER BY t.created_at, t.id) AS __rank, count(*) OVER (PARTITION BY t.company_id) AS __total FROM people t WHERE t.workspace_id = $1 AND t.deleted_at IS NULL AND t.company_id = ANY($2::uuid[])) ranked WHERE __rank <= $3 ORDER BY __rank;

-- children: tickets of companies
SELECT * FROM ( SELECT t.id, t.created_at, t.updated_at, t.deleted_at, t.custom, l.target_id AS __parent, row_number() OVER (PARTITION BY l.target_id ORDER BY l.source_created_at, l.source_id) AS __rank, count(*) OVER (PARTITION BY l.target_id) AS __total FROM record_links l JOIN custom_records t ON t.workspace_id = l.workspace_id AND t.id = l.source_id WHERE l.workspace_id = $1 AND l.field_id = '<field id>' AND l.target_id = ANY($2::uuid[]) AND t.workspace_id = $1 AND t.object_id = '<object id>' AND t.deleted_at IS NULL) ranked WHERE __rank <= $3 ORDER BY __rank;

-- groupBy: tickets by name
SELECT (t.custom->>'name') AS g0, count(*)::bigint AS a0 FROM custom_records t WHERE t.workspace_id = $1 AND t.object_id = '<object id>' AND t.deleted_at IS NULL GROUP BY 1 ORDER BY 1 ASC NULLS LAST LIMIT 1001;

-- liveIds: tickets
SELECT id FROM custom_records WHERE workspace_id = $1 AND object_id = '<object id>' AND deleted_at IS NULL AND id = ANY($2::uuid[]);

-- liveIds: companies a batch links to, locked
SELECT id FROM companies WHERE workspace_id = $1 AND deleted_at IS NULL AND id = ANY($2::uuid[]) FOR SHARE;

-- lockLinking: tickets linking to a company
SELECT t.id, t.created_at, t.updated_at, t.deleted_at, t.custom FROM custom_records t WHERE t.workspace_id = $1 AND t.object_id = '<object id>' AND t.deleted_at IS NULL AND t.id IN (SELECT l.source_id FROM record_links l WHERE l.workspace_id = $1 AND l.field_id = '<field id>' AND l.target_id = ANY($2::uuid[])) ORDER BY t.id LIMIT 10001 FOR UPDATE;

-- countLinked: tickets linking to a company
SELECT count(*)::bigint AS n FROM custom_records t WHERE t.workspace_id = $1 AND t.object_id = '<object id>' AND t.id IN (SELECT l.source_id FROM record_links l WHERE l.workspace_id = $1 AND l.field_id = '<field id>' AND l.target_id = ANY($2::uuid[]));

-- unlink: tickets linking to a company
UPDATE custom_records t SET custom = jsonb_set(t.custom, ARRAY[$3::text], 'null'::jsonb), updated_at = now() WHERE t.workspace_id = $1 AND t.object_id = '<object id>' AND t.id IN (SELECT l.source_id FROM record_links l WHERE l.workspace_id = $1 AND l.field_id = '<field id>' AND l.target_id = ANY($2::uuid[])) RETURNING t.id, t.created_at, t.updated_at, t.deleted_at, t.custom;

-- restoreLinking: tickets deleted with a company
UPDATE custom_records t SET deleted_at = NULL, updated_at = now() WHERE t.workspace_id = $1 AND t.object_id = '<object id>' AND t.deleted_at IS NOT NULL AND t.deleted_at = $3::timestamptz AND t.id IN (SELECT l.source_id FROM record_links l WHERE l.workspace_id = $1 AND l.field_id = '<field id>' AND l.target_id = ANY($2::uuid[])) RETURNING t.id, t.created_at, t.updated_at, t.deleted_at, t.custom;

-- keyMatches: tickets
SELECT q.i, q.field, k.record_id FROM unnest($2::int[], $3::text[], $4::text[], $5::text[]) AS q(i, field, how, raw) JOIN record_keys k ON k.workspace_id = $1 AND k.object = $6 AND k.field = q.field AND k.value = record_key_value(q.how, q.raw);

-- uniqueFields: tickets
SELECT field, compare AS normalize FROM unique_fields WHERE workspace_id = $1 AND object = $2 ORDER BY created_at, field;

-- keyHolder: tickets
SELECT record_id FROM record_keys WHERE workspace_id = $1 AND object = $2 AND field = $3 AND value = $4;

-- countLinking: people linking a company
SELECT count(*)::bigint AS n FROM people WHERE workspace_id = $1 AND company_id = $2;

-- exists: tickets
SELECT 1 FROM custom_records WHERE workspace_id = $1 AND object_id = '<object id>' AND id = $2;

-- exportQuery: tickets, filtered
SELECT t.id FROM custom_records t WHERE t.workspace_id = $1 AND t.object_id = '<object id>' AND t.deleted_at IS NULL AND (t.custom->>'name') = $2::text ORDER BY t.created_at ASC NULLS FIRST, t.id ASC;

-- lockLive: tickets
SELECT id, created_at, updated_at, deleted_at, custom FROM custom_records WHERE workspace_id = $1 AND object_id = '<object id>' AND deleted_at IS NULL AND id = $2 FOR UPDATE;

-- lockLiveMany: tickets
SELECT id, created_at, updated_at, deleted_at, custom FROM custom_records WHERE workspace_id = $1 AND object_id = '<object id>' AND deleted_at IS NULL AND id = ANY($2::uuid[]) ORDER BY id FOR UPDATE;

-- lockAny: tickets
SELECT id, deleted_at FROM custom_records WHERE workspace_id = $1 AND object_id = '<object id>' AND id = $2 FOR UPDATE;

-- lockMatching: tickets
SELECT t.id, t.created_at, t.updated_at, t.deleted_at, t.custom FROM custom_records t WHERE t.workspace_id = $1 AND t.object_id = '<object id>' AND t.deleted_at IS NULL AND (t.custom->>'name') = $2::text ORDER BY t.id LIMIT 10001 FOR UPDATE;

-- countMatching: tickets
SELECT count(*)::bigint AS n FROM custom_records t WHERE t.workspace_id = $1 AND t.object_id = '<object id>' AND t.deleted_at IS NULL AND (t.custom->>'name') = $2::text;

-- insert: people, one linked to a company
INSERT INTO people (workspace_id, first_name, company_id) VALUES ($1, $2, $3) RETURNING id, first_name, last_name, primary_email, additional_emails, company_id, created_at, updated_at, deleted_at;

-- insert: people, the link checked
INSERT INTO people (workspace_id, first_name, company_id) VALUES ($1, $2, coalesce((SELECT id FROM companies WHERE workspace_id = $1 AND deleted_at IS NULL AND id = $3::uuid), record_missing_relation('companyId', 'company', $3::uuid))) RETURNING id, first_name, last_name, primary_email, additional_emails, company_id, created_at, updated_at, deleted_at;

-- insert: tickets
INSERT INTO custom_records (workspace_id, object_id, custom) VALUES ($1, '<object id>'::uuid, $2) RETURNING id, created_at, updated_at, deleted_at, custom;

-- insert: tickets, a custom link checked and locked
INSERT INTO custom_records (workspace_id, object_id, custom) VALUES ($1, '<object id>'::uuid, ($2::jsonb || jsonb_build_object('companyId', coalesce((SELECT id FROM companies WHERE workspace_id = $1 AND deleted_at IS NULL AND id = $3::uuid FOR SHARE), record_missing_relation('companyId', 'company', $3::uuid))))) RETURNING id, created_at, updated_at, deleted_at, custom;

-- update: tickets
UPDATE custom_records SET custom = (custom || $3::jsonb), updated_at = now() WHERE workspace_id = $1 AND object_id = '<object id>' AND deleted_at IS NULL AND id = $2 RETURNING id, created_at, updated_at, deleted_at, custom;

-- update: tickets, a custom link checked and locked
UPDATE custom_records SET custom = ((custom || $3::jsonb)::jsonb || jsonb_build_object('companyId', coalesce((SELECT id FROM companies WHERE workspace_id = $1 AND deleted_at IS NULL AND id = $4::uuid FOR SHARE), record_missing_relation('companyId', 'company', $4::uuid)))), updated_at = now() WHERE workspace_id = $1 AND object_id = '<object id>' AND deleted_at IS NULL AND id = $2 RETURNING id, created_at, updated_at, deleted_at, custom;

-- updateMany: people
UPDATE people SET first_name = $3, updated_at = now() WHERE workspace_id = $1 AND id = ANY($2::uuid[]) RETURNING id, first_name, last_name, primary_email, additional_emails, company_id, created_at, updated_at, deleted_at;

-- softDelete: tickets
UPDATE custom_records SET deleted_at = now(), updated_at = now() WHERE workspace_id = $1 AND object_id = '<object id>' AND deleted_at IS NULL AND id = $2 RETURNING id, created_at, updated_at, deleted_at, custom;

-- softDeleteMany: tickets
UPDATE custom_records SET deleted_at = now(), updated_at = now() WHERE workspace_id = $1 AND object_id = '<object id>' AND id = ANY($2::uuid[]) RETURNING id, created_at, updated_at, deleted_at, custom;

-- restore: tickets
UPDATE custom_records SET deleted_at = NULL, updated_at = now() WHERE workspace_id = $1 AND object_id = '<object id>' AND deleted_at IS NOT NULL AND id = $2 RETURNING id, created_at, updated_at, deleted_at, custom;

-- erase: tickets
DELETE FROM custom_records WHERE workspace_id = $1 AND object_id = '<object id>' AND id = $2;
DELETE FROM webhook_events WHERE workspace_id = $1 AND payload->'data'->'record'->>'id' = $2;
DELETE FROM idempotency_keys WHERE workspace_id = $1 AND strpos(body, $2) > 0;

-- insertRecordset: people, ids returned
INSERT INTO people (workspace_id, first_name) SELECT $1, r.first_name FROM jsonb_populate_recordset(NULL::people, $2::jsonb) r RETURNING id;

-- insertRecordset: tickets, records returned
INSERT INTO custom_records (workspace_id, object_id, custom) SELECT $1, '<object id>'::uuid, r.custom FROM jsonb_populate_recordset(NULL::custom_records, $2::jsonb) r RETURNING id, created_at, updated_at, deleted_at, custom;

-- updateRecordset: tickets
UPDATE custom_records t SET custom = r.custom, updated_at = now() FROM jsonb_populate_recordset(NULL::custom_records, $2::jsonb) r WHERE t.workspace_id = $1 AND t.object_id = '<object id>' AND t.deleted_at IS NULL AND t.id = r.id AND ROW(t.custom) IS DISTINCT FROM ROW(r.custom) RETURNING t.id, t.created_at, t.updated_at, t.deleted_at, t.custom;
