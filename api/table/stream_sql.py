"""Plans a parsed SQL query in STREAMING mode onto DataStream operators: a GROUP BY (with
WHERE before it, HAVING and expressions of aggregates after it) over a view of a stream
becomes Flink's changelog (``changelog.py``); a windowing table function
(``window_tvf.py``) and an interval join (``interval_join.py``) append; projections and
filters (Flink's Calc) append on the stream. Other queries run as before, on Spark SQL
over the bounded stream; constructs Flink would plan otherwise fail here, at planning,
naming the construct."""
from typing import List, Optional

from sqlglot import exp

from .changelog import (ONE_ROW_AGGREGATES, Aggregate, AppendingQuery, Calc, GroupAggregate,
                        changelog_through, on_changelog, one_row_groups)
from .row_expressions import compile_expression
from .sql_parser import WindowFunction, to_spark_sql, unsupported
from .sql_typing import (AGGREGATE_NODES, column_types, flink_aggregate_type,
                         integer_division)
from .types import DataType

__all__ = ['plan_streaming_query', 'on_stream', 'is_calc', 'select_items', 'column_resolver',
           'aggregate_argument']

_INTEGRAL = ('TINYINT', 'SMALLINT', 'INT', 'BIGINT')


def plan_streaming_query(t_env, tree: exp.Expression, sql: str):
    """The table of ``tree`` planned on the engine's operators, or None where it runs on
    Spark SQL (a query of no stream, or one Flink plans otherwise: DISTINCT, ORDER BY,
    ...)."""
    if next(tree.find_all(exp.Window), None) is not None:
        raise unsupported('OVER windows', sql)
    if not isinstance(tree, exp.Select):
        return None
    source = tree.args.get('from_') or tree.args.get('from')
    source = source.this if source is not None else None
    function = source.find(WindowFunction) if source is not None else None
    if function is not None:  # FROM TABLE(TUMBLE(...))
        from .window_tvf import plan_window_query
        return plan_window_query(t_env, tree, function, sql)
    if tree.args.get('joins'):  # FROM a JOIN b ON ... (or FROM a, b WHERE ...)
        if tree.args.get('group') is not None:
            raise unsupported('GROUP BY of joins', sql)
        from .interval_join import plan_join_query
        return plan_join_query(t_env, tree, sql)
    if isinstance(source, exp.Subquery):  # FROM (SELECT ...): a query of its table
        return _of_subquery(t_env, tree, source, sql)
    if not isinstance(source, exp.Table):
        return None
    view = t_env._views.get(source.name)
    if view is None or (view._update_plan() is None and (
            view._stream_rows is None or view._updating)):
        return None
    if tree.args.get('group') is None and not any(
            node for node in tree.find_all(*AGGREGATE_NODES)):
        return _projection(t_env, view, tree, sql)
    return _group_aggregate(t_env, view, tree, sql)


def _of_subquery(t_env, tree: exp.Select, subquery: exp.Subquery, sql: str):
    """``tree`` of the table of ``subquery``, planned as a query of a view of it, where
    both are planned here (else None: Spark SQL runs the statement)."""
    inner = plan_streaming_query(t_env, subquery.this, sql)
    if inner is None:
        return None
    alias = subquery.alias

    def unqualified(node: exp.Expression) -> exp.Expression:  # s.n: n of the view
        if isinstance(node, exp.Column) and alias and node.table == alias:
            return exp.column(node.name)
        return node
    outer = tree.transform(unqualified, copy=True)
    (outer.args.get('from_') or outer.args.get('from')).set(
        'this', exp.Table(this=exp.to_identifier(str(inner))))
    return plan_streaming_query(t_env, outer, sql)


def _projection(t_env, view, tree: exp.Select, sql: str):
    """``SELECT expressions [AS names] FROM view [WHERE condition]`` of a view of a stream:
    the table on the stream itself (which may be unbounded, e.g. for ``INSERT INTO``),
    named and typed as Flink's; None for another query (DISTINCT, ORDER BY, ...), which
    runs on Spark SQL."""
    if not is_calc(tree):
        return None
    if [type(e) for e in tree.expressions] == [exp.Star] and tree.args.get('where') is None \
            and (view._update_plan() is not None or view._stream_rows.bounded()):
        return view  # (of an unbounded stream: its rows as they come, below)
    return on_stream(t_env._spark_query(tree, sql), view, tree, sql, strict=True)


def is_calc(tree: exp.Expression) -> bool:
    """Whether ``tree`` only projects and filters one table (Flink's Calc)."""
    return isinstance(tree, exp.Select) and not any(
        value for name, value in tree.args.items()
        if name not in ('expressions', 'from', 'from_', 'where')) and not any(
        tree.find_all(*AGGREGATE_NODES))


def on_stream(table, view, tree: exp.Select, sql: str, strict: bool):
    """``table``, the typed result of ``tree`` (a Calc of ``view``, a table of a stream),
    with its rows computed on the view's stream: they append as records arrive, and its
    rowtime attribute stays one. Of a view that is a changelog (``-U``/``+U``/``-D``) its
    changes pass through, each of its kind. Where an expression has no evaluation here,
    ``table`` as it is (computed by Spark SQL over the bounded stream), or with ``strict``
    over an unbounded stream or of a changelog, an error naming the construct."""
    names = [n for n, _ in view._columns]
    resolve = column_resolver(names, sql)
    where = tree.args.get('where')
    try:
        condition = compile_expression(where.this, resolve, sql) if where is not None \
            else None
        calc = Calc(condition, tuple(
            compile_expression(e, resolve, sql).typed(t) for e, (_, t) in
            zip(select_items(tree, names), table._columns)))
    except NotImplementedError:
        if view._update_plan() is not None or strict and not view._stream_rows.bounded():
            raise
        return table
    if view._update_plan() is not None:
        table._changelog = changelog_through(view._update_plan(), calc)
        table._updating = True
        return table
    table._stream_rows = view._stream_rows.through(calc, [n for n, _ in table._columns])
    table._changelog = AppendingQuery(table._stream_rows)
    if table._rowtime is not None and table._rowtime == view._rowtime:
        table._watermark_specs = list(view._watermark_specs)
    return table


def select_items(tree: exp.Select, names: List[str]) -> List[exp.Expression]:
    """The select items, ``*`` expanded to every column."""
    items = []
    for item in tree.expressions:
        items += [exp.column(n) for n in names] if isinstance(item, exp.Star) else [item]
    return items


def column_resolver(names: List[str], sql: str, qualifiers=None):
    """The index of a column reference among ``names`` (``qualifiers``: table name or
    alias -> offset and names of its columns, for a query of several tables)."""
    def resolve(column: exp.Column) -> int:
        if qualifiers is not None and column.table:
            offset, table_names = qualifiers.get(column.table, (None, ()))
            if column.name in table_names:
                return offset + table_names.index(column.name)
        elif column.name in names:
            if names.count(column.name) > 1:
                raise ValueError(f"Column '{column.name}' is ambiguous in: {sql}")
            return names.index(column.name)
        raise ValueError(f"Column '{column.sql()}' not found in any table; the columns are "
                         f"{names}: {sql}")
    return resolve


def _group_aggregate(t_env, view, tree: exp.Select, sql: str):
    names = [n for n, _ in view._columns]
    resolve = column_resolver(names, sql)
    where = tree.args.get('where')
    condition = compile_expression(where.this, resolve, sql) if where is not None else None
    group = tree.args.get('group')
    keys = list(group.expressions) if group is not None else []
    for key in keys:
        if not isinstance(key, exp.Column):
            raise unsupported(f"GROUP BY expressions ({key.sql()})", sql)
    key_names = [k.name for k in keys]
    if one_row_groups(view._update_plan(), key_names):
        removed = _without_aggregates(tree)
        if removed is not None:  # one row per group: a Calc, as Flink's planner makes it
            table = t_env._spark_query(tree, sql)
            calc = on_stream(t_env._spark_query(removed, sql), view, removed, sql, strict=True)
            calc._columns = [(name, data_type) for (name, _), (_, data_type)
                             in zip(table._columns, calc._columns)]
            return calc
    arguments, aggregates = [], []  # pre-Calc items after the keys; Aggregates

    def aggregate_of(node: exp.Expression) -> int:
        function = AGGREGATE_NODES[type(node)]
        argument, distinct = aggregate_argument(node, sql)
        star = isinstance(argument, exp.Star) or argument is None
        if star and function != 'count':
            raise unsupported(f"{function.upper()}(*)", sql)
        field = None
        if not star:
            field = len(keys) + len(arguments)
            arguments.append(argument)
        aggregates.append((function, field, distinct))
        return len(aggregates) - 1

    def post_node(node: exp.Expression) -> exp.Expression:
        """``node`` over the aggregate's output: keys by position, aggregates after them."""
        if type(node) in AGGREGATE_NODES:
            return exp.column('__agg%d' % aggregate_of(node))
        if isinstance(node, exp.Column):
            if node.name not in key_names:
                raise ValueError(f"Expression '{node.sql()}' is not being grouped: {sql}")
            return exp.column('__key%d' % key_names.index(node.name))
        return node
    items = [e.transform(post_node, copy=True) for e in tree.expressions]
    having = tree.args.get('having')
    having = having.this.transform(post_node, copy=True) if having is not None else None
    # the types of the aggregate's input (the keys and arguments), planned by Spark
    column_type = column_types([view._columns])
    pre_sql = 'SELECT %s FROM {t}%s' % (
        ', '.join(to_spark_sql(integer_division(e, column_type), sql)
                  for e in keys + arguments) or '1',
        ' WHERE ' + to_spark_sql(where.this, sql) if where is not None else '')
    pre_columns = view._query(pre_sql)._columns
    for i, key in enumerate(keys):
        pre_columns[i] = (key.name, dict(view._columns)[key.name])
    output_names = ['__key%d' % i for i in range(len(keys))] + \
        ['__agg%d' % j for j in range(len(aggregates))]
    post_resolve = column_resolver(output_names, sql)
    post = Calc(compile_expression(having, post_resolve, sql) if having is not None else None,
                tuple(compile_expression(e, post_resolve, sql) for e in items))
    rows = view._stream_rows if view._update_plan() is None else None
    plan = GroupAggregate(
        rows and rows.data_stream, rows and rows.row_of,
        tuple('__in%d' % i for i in range(len(pre_columns))),
        tuple(t for _, t in pre_columns), tuple(range(len(keys))),
        tuple(Aggregate(f, field, distinct, field is not None and
                        pre_columns[field][1]._root in _INTEGRAL)
              for f, field, distinct in aggregates),
        tuple([('key', i) for i in range(len(keys))] +
              [('aggregate', j) for j in range(len(aggregates))]),
        Calc(condition, tuple(compile_expression(e, resolve, sql) for e in keys + arguments)),
        post)
    if rows is None:  # of a changelog: its -U/-D rows retract
        plan = on_changelog(plan, view._update_plan(), plan.pre)
    table = t_env._spark_query(tree, sql)
    output_types = [t for _, t in pre_columns[:len(keys)]] + [
        flink_aggregate_type(f, pre_columns[field][1] if field is not None else None)
        for f, field, _ in aggregates]
    table._columns = [(name, _direct_type(item, output_names, output_types) or data_type)
                      for (name, data_type), item in zip(table._columns, items)]
    table._changelog = plan
    return table


def aggregate_argument(node: exp.Expression, sql: str):
    """The argument of an aggregate call, and whether it aggregates DISTINCT values."""
    argument = node.this
    if not isinstance(argument, exp.Distinct):
        return argument, False
    if len(argument.expressions) != 1:
        raise unsupported('DISTINCT aggregates of several columns', sql)
    return argument.expressions[0], True


def _without_aggregates(tree: exp.Select) -> Optional[exp.Select]:
    """``tree``, a GROUP BY of a unique key, as the Calc of its one row per group (Flink's
    FlinkAggregateRemoveRule): SUM, MIN and MAX of a value are the value, HAVING is a
    condition; None where another aggregate is called."""
    def removed(node: exp.Expression) -> exp.Expression:
        if type(node) not in AGGREGATE_NODES:
            return node
        argument = node.this
        if isinstance(argument, exp.Distinct):
            argument = argument.expressions[0]
        if AGGREGATE_NODES[type(node)] not in ONE_ROW_AGGREGATES:
            raise LookupError(node.sql())
        return argument.copy()
    try:
        calc = tree.transform(removed, copy=True)
    except LookupError:
        return None
    having = calc.args.get('having')
    calc.set('group', None)
    calc.set('having', None)
    return calc if having is None else calc.where(having.this, copy=False)


def _direct_type(item: exp.Expression, names: List[str],
                 types: List[DataType]) -> Optional[DataType]:
    """The type of a select item that is a key or an aggregate as it is, else None."""
    while isinstance(item, (exp.Alias, exp.Paren)):
        item = item.this
    if isinstance(item, exp.Column) and item.name in names:
        return types[names.index(item.name)]
    return None
