"""The types Flink gives SQL expressions where Spark's differ, and the Spark SQL that computes
them as Flink does: arithmetic of integers stays an integer of the wider type (``v / 2`` of
an INT column is an INT, truncated toward zero), a string literal is a ``CHAR(n)``, a CASE
of strings is a ``CHAR(n)`` where all are of one length, else a ``VARCHAR`` of the longest,
and aggregates are typed as in ``flink_aggregate_type``."""
from typing import Callable, Iterable, List, Optional

from sqlglot import exp

from .sql_parser import cast_type
from .types import CharType, DataType, DataTypes, VarCharType

__all__ = ['AGGREGATE_NODES', 'ColumnType', 'column_types', 'flink_type',
           'flink_aggregate_type', 'common_text_type', 'integer_division']

ColumnType = Callable[[exp.Column], Optional[DataType]]  # a column's type, None if unknown

_INTEGRAL = ('TINYINT', 'SMALLINT', 'INT', 'BIGINT')
# aggregate calls -> the function names of changelog.Aggregate
AGGREGATE_NODES = {exp.Sum: 'sum', exp.Count: 'count', exp.Min: 'min', exp.Max: 'max',
                   exp.Avg: 'avg'}


def column_types(tables: Iterable[list]) -> ColumnType:
    """The ColumnType of the columns (name, type) of ``tables``, by name (unknown where
    two tables have a column of the name)."""
    types = {}
    for columns in tables:
        for name, data_type in columns:
            types[name] = None if name in types else data_type
    return lambda column: types.get(column.name)


def flink_aggregate_type(function: str, argument: Optional[DataType]) -> DataType:
    """The result type of a Flink aggregate of a column of ``argument`` type: COUNT is
    BIGINT NOT NULL; SUM, MIN, MAX and AVG keep the argument's type (AVG of integers is
    an integer), and its nullability (a group has a row)."""
    if function == 'count':
        return DataTypes.BIGINT(False)
    if function == 'sum' and argument._root == 'DECIMAL':
        return DataTypes.DECIMAL(38, argument._args[1], argument._nullable)
    return argument


def flink_type(node: exp.Expression, column_type: ColumnType) -> Optional[DataType]:
    """The type Flink gives the expression ``node``, where this module knows it (columns,
    CASTs, literals, integer arithmetic, CASE of strings, aggregates); else None (Spark's
    type is taken)."""
    while isinstance(node, (exp.Alias, exp.Paren)):
        node = node.this
    if isinstance(node, exp.Column):
        return column_type(node)
    if isinstance(node, exp.Cast):
        return cast_type(node)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return DataTypes.CHAR(max(1, len(node.this)), False)
        if node.this.isdigit():
            return DataTypes.INT(False) if int(node.this) < 2 ** 31 else DataTypes.BIGINT(False)
        return None
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)):
        left, right = (flink_type(node.this, column_type),
                       flink_type(node.expression, column_type))
        if not _integral(left) or not _integral(right):
            return None
        if isinstance(node, exp.Mod):  # of the divisor's type, as the Table API's
            return right.nullable() if left._nullable else right
        wider = max(left, right, key=lambda t: _INTEGRAL.index(t._root))
        return wider.nullable() if left._nullable or right._nullable else wider
    if isinstance(node, exp.Neg):
        operand = flink_type(node.this, column_type)
        return operand if _integral(operand) else None
    if isinstance(node, exp.Case):
        branches = [i.args['true'] for i in node.args['ifs']]
        default = node.args.get('default')
        return common_text_type([flink_type(b, column_type) for b in branches] +
                                [flink_type(default, column_type) if default is not None
                                 else None], default is None)
    if isinstance(node, exp.If):
        default = node.args.get('false')
        return common_text_type([flink_type(node.args['true'], column_type),
                                 flink_type(default, column_type) if default is not None
                                 else None], default is None)
    if type(node) in AGGREGATE_NODES:
        argument = node.this
        if isinstance(argument, exp.Distinct) and len(argument.expressions) == 1:
            argument = argument.expressions[0]
        argument_type = None if isinstance(argument, exp.Star) else \
            flink_type(argument, column_type)
        function = AGGREGATE_NODES[type(node)]
        return flink_aggregate_type(function, argument_type) \
            if function == 'count' or argument_type is not None else None
    return None


def common_text_type(types: List[Optional[DataType]],
                     no_default: bool = False) -> Optional[DataType]:
    """The type of a CASE of ``types`` (None for a NULL branch, with ``no_default`` the
    missing ELSE): CHAR(n) where all are CHARs of length n, else VARCHAR of the longest
    (STRING of any STRING); None where they are not all strings."""
    texts = [t for t in types if t is not None]
    if not texts or not all(isinstance(t, (CharType, VarCharType)) for t in texts):
        return None
    nullable = no_default or len(texts) < len(types) or any(t._nullable for t in texts)
    lengths = {t.length for t in texts}
    if len(lengths) == 1 and all(isinstance(t, CharType) for t in texts):
        return DataTypes.CHAR(lengths.pop(), nullable)
    return DataTypes.VARCHAR(max(lengths), nullable)


def integer_division(tree: exp.Expression, column_type: ColumnType) -> exp.Expression:
    """``tree`` with each ``/`` of integers computed as Flink does (truncated toward zero,
    of the wider integer type) in Spark SQL: ``CAST(a DIV b AS INT)``."""
    def divide(node: exp.Expression) -> exp.Expression:
        if isinstance(node, exp.Div):
            data_type = flink_type(node, column_type)
            if data_type is not None:
                return exp.Cast(this=exp.Paren(this=exp.IntDiv(
                    this=integer_division(node.this, column_type),
                    expression=integer_division(node.expression, column_type))),
                    to=exp.DataType.build(data_type._root))
        return node
    return tree.transform(divide, copy=True)


def _integral(data_type: Optional[DataType]) -> bool:
    return data_type is not None and data_type._root in _INTEGRAL
