#!/usr/bin/env node
/**
 * JSON helper for infra/deploy.sh (node is required by the repository, jq is
 * not). Reads local files only; never calls a cloud API.
 *
 *   indexes FILE [EXISTING]   one line per composite index of firestore.indexes.json
 *                             missing from EXISTING (`gcloud firestore indexes composite
 *                             list --format=json` output; omitted: all of them):
 *                             "<collectionGroup> <query-scope> <field-config> ..."
 *   overrides FILE            one line per field override:
 *                             "<collectionGroup> <fieldPath> <gcloud flag> ..."
 *   ttls FILE                 one line per field override with "ttl": true (the key the
 *                             Firebase CLI deploys as a TTL policy): "<collectionGroup> <fieldPath>"
 *   get FILE KEY              a top-level string field (e.g. displayName)
 *   get-each KEY FILE...      "FILE<TAB>value" of a top-level string field, per file
 *   pick FILE KEY             a top-level field as JSON ([] when absent)
 *   render FILE OUT [K=JSON]  writes FILE to OUT with top-level keys set (K=JSON) or
 *                             removed (K=, an empty value)
 *   ruleset FILE              the Firebase Rules API body that creates a ruleset from
 *                             a rules file: {"source":{"files":[{name, content}]}}
 *   has-binding FILE ROLE MEMBER
 *                             "yes" if the IAM policy in FILE (get-iam-policy --format=json)
 *                             grants ROLE to MEMBER unconditionally, "no" otherwise
 *   bucket-drift DESCRIBED LIFECYCLE SECONDS
 *                             what of the payload bucket differs from infra/lib/storage.sh's
 *                             settings, one word a line (uniform-access, public-access-prevention,
 *                             soft-delete, lifecycle), then "location <LOCATION>"; DESCRIBED is
 *                             `gcloud storage buckets describe --raw --format=json` (the API's
 *                             Bucket), LIFECYCLE the file given to --lifecycle-file
 *   app-topology APP_JSON     the topology of `inbox --json app` (APP_JSON) as lines deploy.sh reads:
 *                             "folder F", "name N", "inbound TOPIC SUBSCRIPTION" per inbound topic,
 *                             "dead-letter TOPIC SUBSCRIPTION", "publishes TOPIC" per topic its steps
 *                             publish to; refuses a name Pub/Sub would refuse, naming it
 *   fill APP_JSON SRC OUT     writes every *.json under SRC to OUT (same relative paths) with the
 *                             app's names put in for the {{NAME}} placeholders of the monitoring
 *                             files (see placeholders()); an unknown placeholder is an error;
 *                             prints each placeholder as "NAME=VALUE"
 *   runbook-links FILE OUT URL
 *                             writes the alert policy FILE to OUT with every
 *                             "docs/runbook.md#ANCHOR" of documentation.content made a link
 *                             to URL#ANCHOR, and documentation.links set to the section
 *                             its "Runbook: section "..."" line names; prints each URL
 */
'use strict';

const fs = require('fs');
const path = require('path');

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`${file}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** gcloud's --query-scope value for the API's queryScope. */
function queryScope(scope) {
  const map = {
    COLLECTION: 'collection',
    COLLECTION_GROUP: 'collection-group',
    COLLECTION_RECURSIVE: 'collection-recursive',
  };
  const value = map[scope || 'COLLECTION'];
  if (value === undefined) throw new Error(`unknown queryScope ${scope}`);
  return value;
}

/** The --field-config value of one index field. */
function fieldConfig(field) {
  if (field.order) return `field-path=${field.fieldPath},order=${field.order.toLowerCase()}`;
  if (field.arrayConfig) return `field-path=${field.fieldPath},array-config=${field.arrayConfig.toLowerCase()}`;
  throw new Error(`index field ${field.fieldPath}: only order and arrayConfig are supported`);
}

/** Identity of an index: collection group, scope and fields (the API appends __name__; ignored). */
function signature(collectionGroup, scope, fields) {
  const parts = fields
    .filter((f) => f.fieldPath !== '__name__')
    .map((f) => `${f.fieldPath}:${(f.order || f.arrayConfig || '').toUpperCase()}`);
  return `${collectionGroup}|${scope || 'COLLECTION'}|${parts.join(',')}`;
}

function indexes(file, existingFile) {
  const wanted = readJson(file).indexes || [];
  const existing = new Set();
  if (existingFile) {
    for (const index of readJson(existingFile)) {
      const match = /collectionGroups\/([^/]+)\/indexes\//.exec(index.name || '');
      if (match) existing.add(signature(match[1], index.queryScope, index.fields || []));
    }
  }
  const lines = [];
  for (const index of wanted) {
    if (existing.has(signature(index.collectionGroup, index.queryScope, index.fields))) continue;
    lines.push([index.collectionGroup, queryScope(index.queryScope), ...index.fields.map(fieldConfig)].join(' '));
  }
  return lines;
}

function overrides(file) {
  return (readJson(file).fieldOverrides || []).map((o) => {
    const list = o.indexes || [];
    const flags =
      list.length === 0
        ? ['--disable-indexes']
        : list.map((i) =>
            i.order
              ? `--index=order=${i.order.toLowerCase()}`
              : `--index=array-config=${String(i.arrayConfig).toLowerCase()}`,
          );
    return [o.collectionGroup, o.fieldPath, ...flags].join(' ');
  });
}

/**
 * TTL fields: the overrides with "ttl": true. A ttl that is not a boolean is an
 * error, as it is for the Firebase CLI (which rejects it before deploying anything),
 * so a typo such as "ttl": "true" cannot silently leave a collection without TTL.
 */
function ttls(file) {
  return (readJson(file).fieldOverrides || []).flatMap((o) => {
    if (o.ttl === undefined) return [];
    if (typeof o.ttl !== 'boolean')
      throw new Error(
        `${file}: field override ${o.collectionGroup}.${o.fieldPath}: "ttl" must be true or false, got ${JSON.stringify(o.ttl)}`,
      );
    return o.ttl ? [`${o.collectionGroup} ${o.fieldPath}`] : [];
  });
}

function stringField(file, key) {
  const value = readJson(file)[key];
  if (typeof value !== 'string' || /[\t\n]/.test(value)) throw new Error(`${file}: no single-line string field ${key}`);
  return value;
}

function render(file, out, assignments) {
  const doc = readJson(file);
  for (const assignment of assignments) {
    const eq = assignment.indexOf('=');
    if (eq < 1) throw new Error(`render: expected KEY=JSON, got ${assignment}`);
    const key = assignment.slice(0, eq);
    const value = assignment.slice(eq + 1);
    if (value === '') delete doc[key];
    else doc[key] = JSON.parse(value);
  }
  fs.writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
  return [];
}

function hasBinding(file, role, member) {
  const bindings = readJson(file).bindings || [];
  const found = bindings.some(
    (b) => b.role === role && b.condition === undefined && (b.members || []).includes(member),
  );
  return [found ? 'yes' : 'no'];
}

/**
 * Alert texts name their runbook section as docs/runbook.md#anchor, which
 * opens nowhere outside the repository (Cloud Console, an email). With the
 * runbook's absolute URL (deploy.sh --runbook-url) each reference becomes a
 * link, and the section named in the "Runbook: section" line becomes the
 * policy's documentation link (the API allows up to 3, display names of at
 * most 63 characters).
 */
function runbookLinks(file, out, url) {
  if (!/^https?:\/\/[^\s#"'<>()[\]`]+$/.test(url || '')) {
    throw new Error(
      `--runbook-url must be an http(s) URL of docs/runbook.md without a #fragment (the anchor is appended), got ${JSON.stringify(url)}`,
    );
  }
  const policy = readJson(file);
  const doc = policy.documentation || {};
  const content = String(doc.content || '');
  const rendered = [];
  doc.content = content.replace(/docs\/runbook\.md#([a-z0-9-]+)/g, (reference, anchor) => {
    rendered.push(`${url}#${anchor}`);
    return `[${reference}](${url}#${anchor})`;
  });
  const pointer = /Runbook: section "([^"]+)" of docs\/runbook\.md \(docs\/runbook\.md#([a-z0-9-]+)\)/.exec(content);
  if (pointer) {
    const name = `Runbook: ${pointer[1]}`;
    doc.links = [{ displayName: name.length <= 63 ? name : 'Runbook', url: `${url}#${pointer[2]}` }];
  }
  policy.documentation = doc;
  fs.writeFileSync(out, `${JSON.stringify(policy, null, 2)}\n`);
  return rendered;
}

/** Pub/Sub's rule for topic and subscription ids (functions/src/apps/check-definition.ts checks the same). */
const PUBSUB_NAME = /^[A-Za-z][A-Za-z0-9\-_.~+%]{2,254}$/;
/** INBOX_APP: a folder inside the repository, relative to its root, no part starting with a dot (so no ..). */
const APP_FOLDER = /^[A-Za-z0-9_][A-Za-z0-9_.-]*(\/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$/;
/** The app's name, also a label value on its subscriptions. */
const APP_NAME = /^[a-z][a-z0-9-]{1,39}$/;

/**
 * The app's topology as `inbox --json app` prints it, checked: every name
 * it gives deploy.sh goes into a gcloud command, so one that is not what
 * it should be stops the deploy here, naming the field.
 */
function appTopology(file) {
  const view = readJson(file);
  const refuse = (what) => {
    throw new Error(`${file}: ${what} (is this the output of \`inbox --json app\`?)`);
  };
  const t = view && typeof view === 'object' ? view.topology : undefined;
  if (!t || typeof t !== 'object') refuse('no "topology"');
  const text = (value, where, rule, what) => {
    if (
      typeof value !== 'string' ||
      !rule.test(value) ||
      (rule === PUBSUB_NAME && value.toLowerCase().startsWith('goog'))
    ) {
      refuse(`${where} ${JSON.stringify(value)} is no ${what}`);
    }
    return value;
  };
  const pubsub = (value, where) =>
    text(
      value,
      where,
      PUBSUB_NAME,
      'Pub/Sub name (3 to 255 characters: a letter, then letters, digits and - _ . ~ + %; not goog…)',
    );
  const folder = text(view.folder, 'folder', APP_FOLDER, 'folder relative to the repository root');
  const name = text(t.app, 'topology.app', APP_NAME, 'app name (2 to 40 lower-case letters, digits and dashes)');
  if (!Array.isArray(t.inbound) || t.inbound.length === 0)
    refuse('topology.inbound: no topic the app receives messages on');
  const inbound = t.inbound.map((i, n) => ({
    topic: pubsub(i && i.topic, `topology.inbound[${n}].topic`),
    subscription: pubsub(i && i.subscription, `topology.inbound[${n}].subscription`),
  }));
  const deadLetter = {
    topic: pubsub(t.deadLetter && t.deadLetter.topic, 'topology.deadLetter.topic'),
    subscription: pubsub(t.deadLetter && t.deadLetter.subscription, 'topology.deadLetter.subscription'),
  };
  if (!Array.isArray(t.publishes)) refuse('topology.publishes: not a list');
  const publishes = t.publishes.map((p, n) => pubsub(p, `topology.publishes[${n}]`));
  return { folder, name, inbound, deadLetter, publishes };
}

function appTopologyLines(file) {
  const t = appTopology(file);
  return [
    `folder ${t.folder}`,
    `name ${t.name}`,
    ...t.inbound.map((i) => `inbound ${i.topic} ${i.subscription}`),
    `dead-letter ${t.deadLetter.topic} ${t.deadLetter.subscription}`,
    ...t.publishes.map((p) => `publishes ${p}`),
  ];
}

/** A Pub/Sub name as an RE2 pattern matching it alone: its only metacharacters, . and +, as classes (no backslash to escape twice in JSON). */
const literalPattern = (name) => name.replace(/[.+]/g, (c) => `[${c}]`);

/**
 * What the {{NAME}} placeholders of infra/monitoring/ stand for, from the
 * app's topology: the filters select the app's subscriptions by
 * resource.label.subscription_id, and the alert texts name them.
 */
function placeholders(t) {
  const push = t.inbound.map((i) => i.subscription);
  return {
    PUSH_SUBSCRIPTIONS_REGEX: push.map(literalPattern).join('|'),
    PUSH_SUBSCRIPTIONS: push.join(', '),
    DEAD_LETTER_SUBSCRIPTION: t.deadLetter.subscription,
    DEAD_LETTER_SUBSCRIPTION_REGEX: literalPattern(t.deadLetter.subscription),
    DEAD_LETTER_TOPIC: t.deadLetter.topic,
  };
}

/** The API's limit on an alert policy's documentation.content, in characters. */
const MAX_DOCUMENTATION_CHARS = 8192;

function fillValue(value, values, where) {
  if (typeof value === 'string') {
    return value.replace(/\{\{([^{}]*)\}\}/g, (placeholder, name) => {
      if (!Object.prototype.hasOwnProperty.call(values, name))
        throw new Error(
          `${where}: unknown placeholder ${placeholder}; known: ${Object.keys(values)
            .map((k) => `{{${k}}}`)
            .join(', ')}`,
        );
      return values[name];
    });
  }
  if (Array.isArray(value)) return value.map((v) => fillValue(v, values, where));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillValue(v, values, where)]));
  return value;
}

function jsonFilesUnder(dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? jsonFilesUnder(path.join(dir, e.name))
        : e.name.endsWith('.json')
          ? [path.join(dir, e.name)]
          : [],
    );
}

function fill(appJson, src, out) {
  const values = placeholders(appTopology(appJson));
  for (const file of jsonFilesUnder(src)) {
    const filled = fillValue(readJson(file), values, file);
    const content = filled.documentation && filled.documentation.content;
    if (typeof content === 'string' && content.length > MAX_DOCUMENTATION_CHARS) {
      throw new Error(
        `${file}: documentation.content is ${content.length} characters with the app's names filled in, above the API's ${MAX_DOCUMENTATION_CHARS}: shorten the text`,
      );
    }
    const target = path.join(out, path.relative(src, file));
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, `${JSON.stringify(filled, null, 2)}\n`);
  }
  return Object.entries(values).map(([k, v]) => `${k}=${v}`);
}

/** JSON text with object keys sorted at every level: equal values, equal text. */
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/**
 * The settings of an existing bucket that drifted. The lifecycle file may
 * be {"rule": [...]} or {"lifecycle": {"rule": [...]}}, as gcloud accepts;
 * the rules are compared as values (the API may order keys differently).
 */
function bucketDrift(describedFile, lifecycleFile, softDeleteSeconds) {
  const bucket = readJson(describedFile);
  const wanted = readJson(lifecycleFile);
  const wantedRules = (wanted.lifecycle || wanted).rule || [];
  const iam = bucket.iamConfiguration || {};
  const drift = [];
  if (!(iam.uniformBucketLevelAccess && iam.uniformBucketLevelAccess.enabled === true)) drift.push('uniform-access');
  if (iam.publicAccessPrevention !== 'enforced') drift.push('public-access-prevention');
  if (String((bucket.softDeletePolicy || {}).retentionDurationSeconds) !== String(softDeleteSeconds))
    drift.push('soft-delete');
  if (canonical((bucket.lifecycle || {}).rule || []) !== canonical(wantedRules)) drift.push('lifecycle');
  if (typeof bucket.location !== 'string') throw new Error(`${describedFile}: no location (not a bucket description?)`);
  drift.push(`location ${bucket.location.toUpperCase()}`);
  return drift;
}

function main(argv) {
  const [command, ...args] = argv;
  switch (command) {
    case 'indexes':
      return indexes(args[0], args[1]);
    case 'overrides':
      return overrides(args[0]);
    case 'ttls':
      return ttls(args[0]);
    case 'get':
      return [stringField(args[0], args[1])];
    case 'get-each':
      return args.slice(1).map((file) => `${file}\t${stringField(file, args[0])}`);
    case 'pick': {
      const value = readJson(args[0])[args[1]];
      return [JSON.stringify(value === undefined ? [] : value)];
    }
    case 'render':
      return render(args[0], args[1], args.slice(2));
    case 'app-topology':
      return appTopologyLines(args[0]);
    case 'fill':
      return fill(args[0], args[1], args[2]);
    case 'runbook-links':
      return runbookLinks(args[0], args[1], args[2]);
    case 'ruleset':
      return [
        JSON.stringify({
          source: { files: [{ name: path.basename(args[0]), content: fs.readFileSync(args[0], 'utf8') }] },
        }),
      ];
    case 'has-binding':
      return hasBinding(args[0], args[1], args[2]);
    case 'bucket-drift':
      return bucketDrift(args[0], args[1], args[2]);
    default:
      throw new Error(
        `unknown command ${command}; use indexes, overrides, ttls, get, get-each, pick, render, ruleset, has-binding, bucket-drift, app-topology, fill or runbook-links`,
      );
  }
}

try {
  for (const line of main(process.argv.slice(2))) process.stdout.write(`${line}\n`);
} catch (err) {
  process.stderr.write(`json-tool: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
