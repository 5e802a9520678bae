import {
  LimitNode,
  OperationNodeTransformer,
  ValueNode,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';

/**
 * SQLite re-plans a statement on every run when its LIMIT is a bound parameter: about 25 µs, ten
 * times the cost of the indexed query itself. Limits here are schema-checked integers with few
 * distinct values, so writing them into the SQL as literals is safe and keeps the statement cache
 * effective.
 */
class InlineLimits extends OperationNodeTransformer {
  protected override transformLimit(node: LimitNode): LimitNode {
    const limit = node.limit;
    if (ValueNode.is(limit) && Number.isSafeInteger(limit.value) && (limit.value as number) >= 0) {
      return LimitNode.create(ValueNode.createImmediate(limit.value));
    }
    return super.transformLimit(node);
  }
}

export class InlineLimitsPlugin implements KyselyPlugin {
  private readonly transformer = new InlineLimits();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.transformer.transformNode(args.node);
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}
