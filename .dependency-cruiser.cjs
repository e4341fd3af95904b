/* global module */
/**
 * The rules of the house for imports (ARCHITECTURE.md explains them), checked
 * by dependency-cruiser in `npm run lint`:
 *
 *   depcruise functions/src examples console-ui tools test packages --config .dependency-cruiser.cjs
 *
 * test/unit/import-rules.test.ts shows each rule failing on a wrong import.
 * Type-only imports count (tsPreCompilationDeps): a cycle through types is
 * still a cycle for the reader, and the folder cycles issue 15 removed were
 * partly type imports.
 *
 * @type {import('dependency-cruiser').IConfiguration}
 */

/**
 * The pure core: decisions without I/O, tested in the `unit` project. Written
 * by folder and file-name pattern, so a rename inside a folder (relay/classify.ts
 * to relay/decide.ts) keeps the file in the core.
 */
const PURE = [
  '^functions/src/(core|bpmn)/',
  '^functions/src/engine/(transitions|timer-transitions|run|enter|waits|scopes|joins|incidents|state|ids|engine|repair-basis|items|item-transitions|call-transitions|escalations|expressions)\\.ts$',
  '^functions/src/engine/migration/',
  '^functions/src/relay/(classify|decide|backoff|lane|budget)\\.ts$',
  '^functions/src/receiver/(interpret|envelope|registry)\\.ts$',
  '^functions/src/inbox/(ids|dedup|draft|document|claim-check)\\.ts$',
  '^functions/src/process/variables\\.ts$',
  '^functions/src/cli/(parse|model-check)\\.ts$',
  '^functions/src/operations/(explain|explain-model|explain-words|explain-parked|claim-view|overlays|vocabulary|shard-page|stored-values|basis-change|raw-text|model-notes)\\.ts$',
  '^functions/src/http/loopback\\.ts$',
];

/** What a pure module may load at run time besides the pure core: validation, BPMN XML reading (and Camunda 8's descriptor), FEEL (and node:vm, whose watchdog bounds its evaluation), hashing. */
const PURE_PACKAGES = ['^node_modules/(zod|bpmn-moddle|zeebe-bpmn-moddle|feelin)/', '^crypto$', '^vm$'];

/** Packages and node modules that reach the network, the disk or a process. */
const IO = [
  '^node_modules/(@google-cloud|@grpc|google-auth-library|google-gax|firebase|firebase-admin|firebase-tools)/',
  '^(fs|fs/promises|net|http|https|http2|tls|dgram|dns|child_process|worker_threads|cluster|readline|readline/promises)$',
];

/** The emulators, their clients and what serves functions against them: a unit test imports none of them. */
const EMULATOR_HELPERS = [
  '^test/setup/',
  '^test/support/(firestore|process-stack|receiver|inbox|relay-child|ttl|commit-faults|real-gcloud|functions-api-standin|firebase-api-stand-in|storage)\\.ts$',
  '^(tools|packages)/(emulators|local|faults|cloud-tasks-emulator|storage-emulator)/',
  '^functions/src/(firestore|runtime)\\.ts$',
];

/**
 * What starts an emulator or connects to one: not reachable from a unit test
 * through any chain of imports. Narrower than EMULATOR_HELPERS because the
 * chain follows type-only imports too (tools/demo/plan.ts takes a type from
 * tools/local/provider.ts, which loads nothing at run time).
 */
const EMULATOR_STARTERS = [
  '^test/setup/',
  '^test/support/(firestore|storage)\\.ts$',
  '^tools/emulators/',
  '^tools/local/(stack|serve-function|use-emulators|start)\\.ts$',
  '^functions/src/(firestore|runtime)\\.ts$',
];

const SRC = '^functions/src/';
/** Layer 0 of ARCHITECTURE.md besides core/. */
const SHARED =
  '^functions/src/((config|config-console|config-requirements|log|queries[-a-z]*|firestore)\\.ts$|(http|auth|tasks|storage|trace)/)';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A module takes part in an import cycle: move what both sides need to the lower one.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycle',
      severity: 'error',
      comment:
        'Two folders of functions/src import each other (directly or through others): the layers of ARCHITECTURE.md run one way.',
      scope: 'folder',
      from: { path: SRC },
      to: { circular: true },
    },
    {
      name: 'src-not-to-tooling',
      severity: 'error',
      comment:
        'Deployed code never imports tools/, test/, packages/ or an app (examples/): they are not deployed and would drag dev dependencies in.',
      from: { path: SRC },
      to: { path: '^(tools|test|packages|examples)/' },
    },
    {
      name: 'src-not-to-dev-dependency',
      severity: 'error',
      comment: 'The deployment installs dependencies only; a run-time import of a devDependency fails there.',
      from: { path: SRC },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'pure-core-no-io',
      severity: 'error',
      comment:
        'The pure core does no I/O: no Google client, no gRPC, no fs/net/http, not even their types. Take what it needs as data.',
      from: { path: PURE },
      to: { path: IO },
    },
    {
      name: 'pure-core-stays-pure',
      severity: 'error',
      comment:
        'At run time a pure module imports only the pure core, zod, bpmn-moddle (with the zeebe descriptor), feelin and crypto: never a Firestore adapter, the configuration or the log. Type-only imports are erased and allowed.',
      from: { path: PURE },
      to: { pathNot: [...PURE, ...PURE_PACKAGES], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'layer-core',
      severity: 'error',
      comment: 'core/ is the bottom layer: it imports nothing else of functions/src.',
      from: { path: '^functions/src/core/' },
      to: { path: SRC, pathNot: '^functions/src/core/' },
    },
    {
      name: 'layer-shared',
      severity: 'error',
      comment:
        'The shared pieces beside core/ (configuration, log, queries, the Firestore client, HTTP answers, token check, Cloud Tasks queue) import only core/ and each other.',
      from: { path: SHARED },
      to: { path: SRC, pathNot: [SHARED, '^functions/src/core/'] },
    },
    {
      name: 'layer-bpmn',
      severity: 'error',
      comment: 'bpmn/ (the process language: model, parser, conditions) imports only core/.',
      from: { path: '^functions/src/bpmn/' },
      to: { path: SRC, pathNot: '^functions/src/(bpmn|core)/' },
    },
    {
      name: 'layer-engine',
      severity: 'error',
      comment: 'engine/ (core and store) runs bpmn/ models; it knows nothing of the inbox, the relay or the functions.',
      from: { path: '^functions/src/engine/' },
      to: { path: SRC, pathNot: '^functions/src/(engine|bpmn|core)/' },
    },
    {
      name: 'layer-inbox',
      severity: 'error',
      comment:
        'inbox/ (what is stored, and the one write) sits below receiver/, deadletter/ and relay/: it imports only engine/ (lane ids), bpmn/, core/, and the two interfaces the offload is handed (the payload store, the logger).',
      from: { path: '^functions/src/inbox/' },
      to: {
        path: SRC,
        pathNot: ['^functions/src/(inbox|engine|bpmn|core)/', '^functions/src/(log|storage/payload-store)\\.ts$'],
      },
    },
    {
      name: 'layer-receiver-jobs',
      severity: 'error',
      comment:
        'receiver/ and jobs/ sit below the functions built on them: they import nothing of deadletter/, relay/ or process/.',
      from: { path: '^functions/src/(receiver|jobs)/' },
      to: { path: '^functions/src/(deadletter|relay|process)/' },
    },
    {
      name: 'composition-root',
      severity: 'error',
      comment:
        'index.ts, wiring.ts and runtime.ts build the functions from the configuration; only they and the CLI (its own entry point) import them.',
      from: { path: SRC, pathNot: ['^functions/src/(index|wiring|runtime)\\.ts$', '^functions/src/(cli|console)/'] },
      to: { path: '^functions/src/(index|wiring|runtime)\\.ts$' },
    },
    {
      name: 'operations-for-operators',
      severity: 'error',
      comment:
        'operations/ is the one implementation of every operator read and repair: the CLI and the console use it, nothing deployed below them does.',
      from: { path: SRC, pathNot: ['^functions/src/(operations|cli|console)/', '^functions/src/(index|wiring)\\.ts$'] },
      to: { path: '^functions/src/operations/' },
    },
    {
      name: 'console-page-types-only',
      severity: 'error',
      comment:
        'The console page runs in the browser: of functions/src it takes only the types of operations/types.ts, and only as types (erased by the bundle).',
      from: { path: '^console-ui/' },
      to: { path: SRC, pathNot: '^functions/src/operations/types\\.ts$' },
    },
    {
      name: 'console-page-erased-imports',
      severity: 'error',
      comment:
        'A value import of operations/types.ts would pull server modules into the page bundle: import type only.',
      from: { path: '^console-ui/' },
      to: { path: '^functions/src/operations/types\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'console-on-top',
      severity: 'error',
      comment:
        'The console is one face of operations/: only the composition root imports it, and it imports nothing of the CLI (their shared code lives in operations/).',
      from: { path: SRC, pathNot: ['^functions/src/console/', '^functions/src/(index|wiring)\\.ts$'] },
      to: { path: '^functions/src/console/' },
    },
    {
      name: 'cli-on-top',
      severity: 'error',
      comment: "The operator CLI uses the functions' modules; nothing deployed imports the CLI.",
      from: { path: SRC, pathNot: '^functions/src/cli/' },
      to: { path: '^functions/src/cli/' },
    },
    {
      name: 'system-not-to-apps',
      severity: 'error',
      comment:
        "The system names no app: functions/src, the console page, tools/ and the system's tests (test/) never import an app (examples/); the system loads the app INBOX_APP names at run time (apps/load-app.ts).",
      from: { path: '^(functions/src|console-ui|tools|test)/' },
      to: { path: '^examples/' },
    },
    {
      name: 'app-public-surface',
      severity: 'error',
      comment:
        'An app (the files of examples/APP/ that are bundled and deployed, beside its index.ts) imports of the system only functions/src/app.ts, its public module; its tests and tooling in subfolders may import more.',
      from: { path: '^examples/[^/]+/[^/]+\\.ts$' },
      to: { path: SRC, pathNot: '^functions/src/app\\.ts$' },
    },
    {
      name: 'unit-tests-no-emulators',
      severity: 'error',
      comment:
        'test/unit and test/property form the `unit` project, run without emulators: they import no emulator helper and no client factory.',
      from: { path: '^(test/(unit|property)|examples/[^/]+/test/unit)/' },
      to: { path: EMULATOR_HELPERS, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'unit-tests-never-reach-emulators',
      severity: 'error',
      comment:
        'Nor through other modules: no chain of imports from a unit test reaches what starts or connects to an emulator.',
      from: { path: '^(test/(unit|property)|examples/[^/]+/test/unit)/' },
      to: { path: EMULATOR_STARTERS, reachable: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment:
        "An import that resolves to no file or package. Not firebase-tools: it lives outside the root install (tools/firebase/, jest maps its test's imports there).",
      from: {},
      to: { couldNotResolve: true, pathNot: '^firebase-tools/' },
    },
    {
      name: 'no-non-package-json',
      severity: 'error',
      comment: 'A package imported but not declared in package.json (firebase-tools: tools/firebase/package.json).',
      from: {},
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'], pathNot: '(^|/)node_modules/firebase-tools/' },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'A module nothing imports and that imports nothing: dead code, or a script to register in package.json.',
      from: { orphan: true, pathNot: ['\\.d\\.ts$', '\\.json$'] },
      to: {},
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    // examples/work-orders/bench/fixtures has its own package.json (the Functions Framework CLI serves it) but uses the root's packages.
    combinedDependencies: true,
    doNotFollow: { path: '^node_modules/' },
    exclude: { path: '^(dist|coverage|examples/[^/]+/bench/results)/|/node_modules/' },
    // The project is CommonJS: resolve packages' "exports" as require() does (bpmn-moddle has no main).
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['require', 'node', 'default'] },
  },
};
