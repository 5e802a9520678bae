import {
  sql,
  type KyselyPlugin,
  type OperationNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';

/**
 * Tenant isolation is enforced where the SQL is made, not remembered by whoever writes it. The test
 * suite's stores run every statement through this guard: a SELECT, UPDATE or DELETE (subqueries
 * included) that reads a tenant table must compare that table's `environment_id` with a value, and
 * a join of tenant tables must carry `environment_id` into the join condition. The few statements that
 * are cross-tenant by design say so with `crossTenant(reason)` at their end, where a reviewer sees it.
 */
export class TenantScopeViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TenantScopeViolation';
  }
}

const CROSS_TENANT_MARK = '/* cross-tenant: ';

/**
 * Marks a statement that reads or writes across environments on purpose (a credential found by its
 * hash, an instance-wide sweep). Use with `.modifyEnd(crossTenant('why'))`; the reason is a SQL
 * comment, so it costs nothing and shows in query logs.
 */
export function crossTenant(reason: string) {
  if (reason.includes('*/')) throw new Error('crossTenant: the reason cannot contain "*/"');
  return sql.raw(`${CROSS_TENANT_MARK}${reason} */`);
}

type AnyNode = OperationNode & Record<string, unknown>;

const STATEMENT_KINDS = new Set(['SelectQueryNode', 'UpdateQueryNode', 'DeleteQueryNode']);
const ENVIRONMENT_COLUMN = 'environment_id';

function isNode(value: unknown): value is AnyNode {
  return typeof value === 'object' && value !== null && typeof (value as { kind?: unknown }).kind === 'string';
}

function children(node: AnyNode): AnyNode[] {
  const found: AnyNode[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key === 'kind') continue;
    if (Array.isArray(value)) for (const item of value) if (isNode(item)) found.push(item);
    if (isNode(value)) found.push(value);
  }
  return found;
}

/** `environment_id`, bare or qualified (`users.environment_id`). */
function isEnvironmentColumn(node: unknown): boolean {
  if (!isNode(node) || node.kind !== 'ReferenceNode') return false;
  const column = node.column as AnyNode;
  const identifier = column.kind === 'ColumnNode' ? (column.column as AnyNode) : undefined;
  return identifier?.name === ENVIRONMENT_COLUMN;
}

function isComparison(node: AnyNode): boolean {
  const operator = (node.operator as AnyNode | undefined)?.operator;
  return operator === '=' || operator === 'in';
}

/** The condition compares environment_id with a value on every path (both sides of an OR). */
function pinsEnvironment(node: AnyNode | undefined): boolean {
  if (!node) return false;
  switch (node.kind) {
    case 'BinaryOperationNode': {
      if (!isComparison(node)) return false;
      const left = node.leftOperand;
      const right = node.rightOperand;
      return (isEnvironmentColumn(left) && !isEnvironmentColumn(right)) || (isEnvironmentColumn(right) && !isEnvironmentColumn(left));
    }
    case 'AndNode':
      return pinsEnvironment(node.left as AnyNode) || pinsEnvironment(node.right as AnyNode);
    case 'OrNode':
      return pinsEnvironment(node.left as AnyNode) && pinsEnvironment(node.right as AnyNode);
    case 'ParensNode':
      return pinsEnvironment(node.node as AnyNode);
    case 'WhereNode':
    case 'OnNode':
      return pinsEnvironment(node.where as AnyNode);
    default:
      return false;
  }
}

/** A join condition mentions environment_id (pinned to a value, or equal to the other table's). */
function mentionsEnvironment(node: AnyNode | undefined): boolean {
  if (!node) return false;
  if (isEnvironmentColumn(node)) return true;
  return children(node).some(mentionsEnvironment);
}

function tableName(node: AnyNode | undefined): string | undefined {
  if (!node) return undefined;
  if (node.kind === 'AliasNode') return tableName(node.node as AnyNode);
  if (node.kind !== 'TableNode') return undefined;
  const identifier = (node.table as AnyNode).identifier as AnyNode;
  return identifier.name as string;
}

function isMarkedCrossTenant(node: AnyNode): boolean {
  const modifiers = (node.endModifiers as AnyNode[] | undefined) ?? [];
  return modifiers.some((modifier) => {
    // SELECT wraps its modifiers in a SelectModifierNode; UPDATE and DELETE keep the RawNode bare.
    const raw = modifier.kind === 'SelectModifierNode' ? (modifier.rawModifier as AnyNode | undefined) : modifier;
    return raw?.kind === 'RawNode' && (raw.sqlFragments as string[]).some((f) => f.startsWith(CROSS_TENANT_MARK));
  });
}

export class TenantScopeGuard implements KyselyPlugin {
  constructor(private readonly tenantTables: ReadonlySet<string>) {}

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.check(args.node as unknown as AnyNode);
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }

  private check(node: AnyNode): void {
    if (isMarkedCrossTenant(node)) return;
    if (STATEMENT_KINDS.has(node.kind)) this.checkStatement(node);
    for (const child of children(node)) this.check(child);
  }

  private checkStatement(node: AnyNode): void {
    const fromTables = [
      ...(((node.from as AnyNode | undefined)?.froms as AnyNode[] | undefined) ?? []),
      ...(node.kind === 'UpdateQueryNode' ? [node.table as AnyNode] : []),
      ...(((node.using as AnyNode | undefined)?.tables as AnyNode[] | undefined) ?? []),
    ]
      .map(tableName)
      .filter((name): name is string => name !== undefined && this.tenantTables.has(name));
    const joins = ((node.joins as AnyNode[] | undefined) ?? []).filter((join) => {
      const name = tableName(join.table as AnyNode);
      return name !== undefined && this.tenantTables.has(name);
    });
    if (fromTables.length === 0 && joins.length === 0) return;
    const described = () => [...fromTables, ...joins.map((j) => tableName(j.table as AnyNode))].join(', ');
    if (!pinsEnvironment(node.where as AnyNode | undefined)) {
      throw new TenantScopeViolation(
        `A ${node.kind.replace('QueryNode', '').toUpperCase()} of ${described()} has no "environment_id = <value>" condition. ` +
          'Scope it to one environment, or mark it with .modifyEnd(crossTenant("why")).',
      );
    }
    for (const join of joins) {
      if (!mentionsEnvironment(join.on as AnyNode | undefined)) {
        throw new TenantScopeViolation(
          `The join of ${tableName(join.table as AnyNode)} does not carry environment_id into its ON condition; join on it too.`,
        );
      }
    }
  }
}
