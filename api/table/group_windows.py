"""Group windows of the Table API in STREAMING mode
(``table.window(Tumble.over(lit(10).seconds).on(col('ts')).alias('w')).group_by(col('w'),
col('k')).select(col('k'), col('w').start, col('v').sum)``), planned as the window table
function query Flink runs for them (``window_tvf.py``): ``SELECT ... FROM
TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL ...)) GROUP BY window_start, window_end,
keys``, the window's properties its window columns."""
from typing import List

from .expressions import (WINDOW_PROPERTIES, Expression, col, column_name, quote, to_sql,
                          unaliased)
from .sql_parser import unsupported
from .types import DataTypes

__all__ = ['window_aggregate']


def window_aggregate(table, window, keys: List[Expression], fields: List[Expression]):
    """The table of ``table.window(window).group_by(*keys).select(*fields)``: one row per
    window and group, appended when the watermark passes the window's end."""
    from .table import Table
    t_env = table._t_env
    described = 'window(%s).group_by(%s).select(%s)' % (
        window._alias, ', '.join(map(str, keys)), ', '.join(map(str, fields)))
    if not t_env._is_streaming():
        raise unsupported("Group windows of the Table API", described, 'BATCH')
    aliases = [k for k in keys if k._name == 'field' and k._args[0] == window._alias]
    if len(aliases) != 1:
        raise ValueError(f"GroupBy must contain exactly one window alias '{window._alias}': "
                         f"{described}")
    keys = [k for k in keys if k is not aliases[0]]
    if any(k._name != 'field' for k in keys):
        raise unsupported("Group windows grouped by expressions other than columns",
                          described)
    # the items over the table's columns and the window columns, named as Flink names them
    with_windows = Table(t_env, table._columns + [
        (c, DataTypes.TIMESTAMP(3)) for c in WINDOW_PROPERTIES.values() if c], None)
    items, properties, unnamed = [], {}, 0
    for field in fields:
        name = column_name(field)
        if name is None or unaliased(field)._name != 'field':
            name = name or 'EXPR$%d' % unnamed
            unnamed += 1
        expression = _with_window_columns(unaliased(field), window._alias, described)
        if expression._name == 'field' and expression._args[0] in WINDOW_PROPERTIES.values():
            properties[name] = expression._args[0]
        items.append('%s AS %s' % (to_sql(expression, with_windows._type_of,
                                          t_env._function_name), quote(name)))
    key_names = [quote(k._args[0]) for k in keys]
    partition = ' PARTITION BY (%s)' % ', '.join(key_names) \
        if window._kind == 'SESSION' and keys else ''
    result = t_env.sql_query(
        "SELECT %s FROM TABLE(%s(TABLE %s%s, DESCRIPTOR(%s), %s)) GROUP BY %s" % (
            ', '.join(items), window._kind, table, partition, quote(window._time_field),
            ', '.join("INTERVAL '%d' MILLISECOND" % i for i in window._intervals),
            ', '.join(['window_start', 'window_end', 'window_time'] + key_names)))
    # the Table API's window properties are nullable, its rowtime a time attribute
    result._columns = [(n, DataTypes.TIMESTAMP(3) if n in properties else t)
                       for n, t in result._columns]
    result._rowtime = next((n for n, c in properties.items() if c == 'window_time'), None)
    return result


def _with_window_columns(expression: Expression, alias: str, described: str) -> Expression:
    """``expression`` with the window's properties (``col('w').start``) as window columns."""
    if expression._name in WINDOW_PROPERTIES and expression._args[0]._name == 'field' and \
            expression._args[0]._args[0] == alias:
        if WINDOW_PROPERTIES[expression._name] is None:
            raise unsupported(f"The {expression._name} property of event-time windows",
                              described)
        return col(WINDOW_PROPERTIES[expression._name])
    if expression._name == 'field' and expression._args[0] == alias:
        raise ValueError(f"The window alias '{alias}' is selected only by its properties "
                         f"({alias}.start, {alias}.end, {alias}.rowtime): {described}")
    return Expression(expression._name, *[
        _with_window_columns(a, alias, described) if isinstance(a, Expression) else a
        for a in expression._args])
