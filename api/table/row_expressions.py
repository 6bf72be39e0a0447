"""SQL scalar expressions evaluated on a stream's rows, in the tasks of a streaming query
(WHERE, HAVING, select items, aggregate arguments, computed columns, join conditions):
a parsed expression is compiled against the input's column names into a tree of plain
tuples, evaluated with SQL's NULL semantics. A construct without an evaluation here
fails when the statement is planned, naming it."""
import datetime
import decimal
import operator
import re
from typing import Callable, Optional, Sequence, Tuple

from sqlglot import exp

from .sql_parser import FlinkSQL, unsupported

__all__ = ['RowExpression', 'compile_expression', 'interval_millis']

_BINARY = {exp.Add: 'add', exp.Sub: 'sub', exp.Mul: 'mul', exp.Div: 'div', exp.Mod: 'mod',
           exp.EQ: 'eq', exp.NEQ: 'ne', exp.GT: 'gt', exp.GTE: 'ge', exp.LT: 'lt',
           exp.LTE: 'le', exp.DPipe: 'concat', exp.Like: 'like'}
_UNARY = {exp.Upper: 'upper', exp.Lower: 'lower', exp.Length: 'length', exp.Abs: 'abs',
          exp.Neg: 'neg'}
_UNITS = {'MILLISECOND': 1, 'SECOND': 1000, 'MINUTE': 60_000, 'HOUR': 3_600_000,
          'DAY': 86_400_000}

Resolver = Callable[[exp.Column], int]  # a column reference -> its index in the row


def interval_millis(node: exp.Expression, sql: str) -> int:
    """The milliseconds of ``INTERVAL 'n' UNIT``."""
    if not isinstance(node, exp.Interval):
        raise unsupported(f"Intervals other than INTERVAL 'n' UNIT ({node.sql()})", sql)
    unit = node.unit.name.upper().rstrip('S') if node.unit else 'SECOND'
    if unit not in _UNITS:
        raise unsupported(f"Intervals of {unit}", sql)
    return int(decimal.Decimal(node.this.name) * _UNITS[unit])


def compile_expression(node: exp.Expression, resolve: Resolver, sql: str) -> 'RowExpression':
    """The evaluation of ``node`` on a row; ``resolve`` finds the index of a column."""
    return RowExpression(_compile(node, resolve, sql))


class RowExpression:
    """A compiled scalar expression: ``expression(row)`` is its value for a row (a tuple)."""

    def __init__(self, tree: tuple):
        self._tree = tree

    def __call__(self, row: Sequence):
        return _evaluate(self._tree, row)

    def column(self) -> Optional[int]:
        """The index of the column the expression is, if it is one."""
        return self._tree[1] if self._tree[0] == 'col' else None

    def typed(self, data_type) -> 'RowExpression':
        """The expression with values of ``data_type`` (a DataType): a DECIMAL's rounded to
        its scale, as Flink's (``v / 2.0`` of DECIMAL(17, 6) is 0.500000)."""
        if data_type._root != 'DECIMAL':
            return self
        return RowExpression(('cast', self._tree, ('decimal', data_type._args[1])))

    def referenced(self) -> frozenset:
        """The indices of the columns the expression reads."""
        return _referenced(self._tree)

    def of(self, items: Sequence['RowExpression']) -> 'RowExpression':
        """This expression of the row of ``items`` (each column i is ``items[i]``)."""
        return RowExpression(_substituted(self._tree, [item._tree for item in items]))

    def and_(self, other: 'RowExpression') -> 'RowExpression':
        """This condition AND ``other``."""
        return RowExpression(('and', self._tree, other._tree))

    def holds(self, row: Sequence) -> bool:
        """True where the expression (a condition) is TRUE (not FALSE, not NULL)."""
        return _evaluate(self._tree, row) is True


def _referenced(tree) -> frozenset:
    if isinstance(tree, tuple) and len(tree) == 2 and tree[0] == 'col':
        return frozenset([tree[1]])
    nodes = tree if isinstance(tree, (tuple, list)) else ()
    return frozenset().union(*(_referenced(n) for n in nodes))


def _substituted(tree, columns: list):
    if isinstance(tree, tuple) and len(tree) == 2 and tree[0] == 'col':
        return columns[tree[1]]
    if isinstance(tree, (tuple, list)):
        return type(tree)(_substituted(n, columns) for n in tree)
    return tree


def _compile(node: exp.Expression, resolve: Resolver, sql: str) -> tuple:
    def sub(child):
        return _compile(child, resolve, sql)
    if isinstance(node, (exp.Paren, exp.Alias)):
        return sub(node.this)
    if isinstance(node, exp.Column):
        return ('col', resolve(node))
    if isinstance(node, exp.Literal):
        if node.is_string:
            return ('value', node.this)
        text = node.this
        return ('value', int(text) if text.lstrip('-').isdigit() else decimal.Decimal(text))
    if isinstance(node, exp.Boolean):
        return ('value', node.this)
    if isinstance(node, exp.Null):
        return ('value', None)
    if isinstance(node, exp.Interval):
        return ('value', datetime.timedelta(milliseconds=interval_millis(node, sql)))
    if type(node) in _BINARY:
        return (_BINARY[type(node)], sub(node.this), sub(node.expression))
    if type(node) in _UNARY:
        return (_UNARY[type(node)], sub(node.this))
    if isinstance(node, exp.And):
        return ('and', sub(node.this), sub(node.expression))
    if isinstance(node, exp.Or):
        return ('or', sub(node.this), sub(node.expression))
    if isinstance(node, exp.Not):
        if isinstance(node.this, exp.Is):  # IS NOT NULL
            return ('not_null', sub(node.this.this))
        return ('not', sub(node.this))
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        return ('is_null', sub(node.this))
    if isinstance(node, exp.Between):
        return ('between', sub(node.this), sub(node.args['low']), sub(node.args['high']))
    if isinstance(node, exp.In) and node.expressions:
        return ('in', sub(node.this), tuple(sub(e) for e in node.expressions))
    if isinstance(node, exp.Coalesce):
        return ('coalesce', tuple(sub(e) for e in [node.this, *node.expressions]))
    if isinstance(node, exp.If):
        return ('case', ((sub(node.this), sub(node.args['true'])),),
                sub(node.args['false']) if node.args.get('false') else ('value', None))
    if isinstance(node, exp.Case):  # CASE [operand] WHEN ...: WHEN values equal the operand
        def condition(when):
            return sub(when) if node.this is None else ('eq', sub(node.this), sub(when))
        return ('case', tuple((condition(w.this), sub(w.args['true']))
                              for w in node.args['ifs']),
                sub(node.args['default']) if node.args.get('default') else ('value', None))
    if isinstance(node, exp.Cast):
        return ('cast', sub(node.this), _cast_target(node.to, sql))
    if isinstance(node, exp.Anonymous) and node.name.upper() == 'TO_TIMESTAMP_LTZ':
        unit = int(node.expressions[1].name) if len(node.expressions) > 1 else 3
        return ('instant', sub(node.expressions[0]), ('value', 10 ** unit))
    raise unsupported(f"Expressions of {node.sql(dialect=FlinkSQL)!r} in queries over streams",
                      sql)


def _cast_target(data_type: exp.DataType, sql: str) -> Tuple[str, Optional[int]]:
    kind = data_type.this
    types = exp.DataType.Type
    if kind in (types.TIMESTAMP, types.TIMESTAMPLTZ, types.TIMESTAMPNTZ):
        return 'timestamp', None
    if kind in (types.TINYINT, types.SMALLINT, types.INT, types.BIGINT):
        return 'int', None
    if kind in (types.FLOAT, types.DOUBLE):
        return 'float', None
    if kind == types.DECIMAL:
        scale = data_type.expressions[1].name if len(data_type.expressions) > 1 else '0'
        return 'decimal', int(scale)
    if kind in (types.VARCHAR, types.CHAR, types.TEXT):
        return 'string', None
    if kind == types.BOOLEAN:
        return 'boolean', None
    raise unsupported(f"CASTs to {data_type.sql(dialect=FlinkSQL)} in queries over streams",
                      sql)


_COMPARISONS = {'eq': operator.eq, 'ne': operator.ne, 'gt': operator.gt,
                'ge': operator.ge, 'lt': operator.lt, 'le': operator.le}


def _evaluate(tree: tuple, row: Sequence):
    kind = tree[0]
    if kind == 'col':
        return row[tree[1]]
    if kind == 'value':
        return tree[1]
    if kind == 'and':
        left, right = _evaluate(tree[1], row), _evaluate(tree[2], row)
        return False if left is False or right is False else \
            None if left is None or right is None else True
    if kind == 'or':
        left, right = _evaluate(tree[1], row), _evaluate(tree[2], row)
        return True if left is True or right is True else \
            None if left is None or right is None else False
    if kind == 'is_null':
        return _evaluate(tree[1], row) is None
    if kind == 'not_null':
        return _evaluate(tree[1], row) is not None
    if kind == 'coalesce':
        return next((v for v in (_evaluate(t, row) for t in tree[1]) if v is not None), None)
    if kind == 'case':
        for condition, value in tree[1]:
            if _evaluate(condition, row) is True:
                return _evaluate(value, row)
        return _evaluate(tree[2], row)
    if kind == 'in':
        value = _evaluate(tree[1], row)
        options = [_evaluate(t, row) for t in tree[2]]
        if value is None:
            return None
        return True if value in options else None if None in options else False
    if kind == 'cast':
        value = _evaluate(tree[1], row)
        return None if value is None else _cast(value, *tree[2])
    values = [_evaluate(t, row) for t in tree[1:]]
    if any(v is None for v in values):
        return None
    if kind in _COMPARISONS:
        return _COMPARISONS[kind](*_comparable(*values))
    if kind == 'between':
        value, low, high = values
        return low <= value <= high
    return _ARITHMETIC[kind](*values)


def _comparable(left, right):
    """Numbers of mixed kinds compare as decimals (Flink's exact comparison)."""
    if isinstance(left, decimal.Decimal) != isinstance(right, decimal.Decimal) and \
            isinstance(left, (int, float, decimal.Decimal)):
        return decimal.Decimal(left), decimal.Decimal(right)
    return left, right


def _divide(left, right):
    if isinstance(left, int) and isinstance(right, int):  # Java's: toward zero
        quotient = abs(left) // abs(right)
        return quotient if (left >= 0) == (right >= 0) else -quotient
    return left / right


def _mod(left, right):
    if isinstance(left, int) and isinstance(right, int):  # the dividend's sign, as Java's
        remainder = abs(left) % abs(right)
        return remainder if left >= 0 else -remainder
    return left % right


def _numbers(function):
    def apply(left, right):
        if isinstance(left, float) or isinstance(right, float):
            return function(float(left), float(right))
        return function(left, right)
    return apply


def _local_time(epoch: int, per_second: int) -> datetime.datetime:
    """TO_TIMESTAMP_LTZ: the local time of an epoch time in seconds or milliseconds."""
    seconds, fraction = divmod(epoch, per_second)
    return datetime.datetime.fromtimestamp(seconds) + datetime.timedelta(
        microseconds=fraction * 1_000_000 // per_second)


def _like(value: str, pattern: str) -> bool:
    """SQL's LIKE: ``%`` any characters, ``_`` one character."""
    regex = ''.join('.*' if c == '%' else '.' if c == '_' else re.escape(c) for c in pattern)
    return re.fullmatch(regex, value, re.S) is not None


_ARITHMETIC = {'add': _numbers(operator.add), 'sub': _numbers(operator.sub),
               'mul': _numbers(operator.mul), 'div': _divide, 'mod': _mod,
               'concat': lambda left, right: '%s%s' % (left, right),
               'upper': str.upper, 'lower': str.lower, 'length': len, 'abs': abs,
               'neg': operator.neg, 'like': _like,
               'instant': _local_time}


def _cast(value, target: str, scale: Optional[int]):
    if target == 'timestamp':
        if isinstance(value, str):
            return datetime.datetime.fromisoformat(value.strip().replace('T', ' '))
        return value
    if target == 'int':
        return int(value)
    if target == 'float':
        return float(value)
    if target == 'decimal':
        return decimal.Decimal(value).quantize(decimal.Decimal(1).scaleb(-scale),
                                               rounding=decimal.ROUND_HALF_UP)
    if target == 'boolean':
        return value if isinstance(value, bool) else str(value).strip().upper() == 'TRUE'
    return str(value).lower() if isinstance(value, bool) else str(value)
