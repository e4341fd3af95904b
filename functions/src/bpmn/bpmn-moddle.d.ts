/**
 * The part of bpmn-moddle 9 this project uses; the package ships no types.
 * Element properties are `unknown` on purpose: what the XML holds is only
 * known after narrowing, which the parser does (functions/src/bpmn/parse-model.ts).
 * At runtime `require('bpmn-moddle')` resolves to dist/index.cjs, whose
 * `module.exports` is the constructor, hence `export =`.
 */
declare module 'bpmn-moddle' {
  namespace BpmnModdle {
    /**
     * A parsed element, e.g. a bpmn:ServiceTask. Properties by their local
     * name (`async`, not `inbox:async`); references (`sourceRef`, `messageRef`,
     * `default`) already resolved to elements; `$parent` is the containing element.
     */
    interface ModdleElement {
      /** Qualified type name, e.g. `bpmn:ServiceTask`. */
      readonly $type: string;
      /** Attributes of namespaces moddle does not know, by qualified name. */
      readonly $attrs?: Readonly<Record<string, unknown>>;
      readonly [property: string]: unknown;
    }

    /** Something moddle skipped or could not resolve while reading, so the tree may lack it. */
    interface ImportWarning {
      readonly message: string;
      /** The element being read, when the warning concerns one. */
      readonly element?: ModdleElement;
      /** The qualified property name, e.g. `bpmn:targetRef`. */
      readonly property?: string;
      readonly value?: unknown;
      /** What made the reader skip an element (`illegal ID < s >`, `duplicate ID <s>`), when it skipped one. */
      readonly error?: Error;
    }

    interface ParseResult {
      /** The bpmn:Definitions element. */
      readonly rootElement: ModdleElement;
      readonly warnings: readonly ImportWarning[];
    }
  }

  class BpmnModdle {
    /** @param packages extension descriptors by prefix, e.g. `{ inbox: descriptor }`. */
    constructor(packages?: Readonly<Record<string, object>>);
    /** Reads BPMN XML as bpmn:Definitions; rejects with an Error when the XML cannot be read at all. */
    fromXML(xml: string): Promise<BpmnModdle.ParseResult>;
  }

  export = BpmnModdle;
}
