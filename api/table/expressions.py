"""The Table API's expressions, as ``pyflink.table.expressions``: ``col``, ``lit``, ``call``
and friends build :class:`Expression` trees; a table translates them to Spark SQL text
(``to_sql``) when it is queried. Results keep Flink's types where Spark's differ: an
integer ``/`` and ``%`` stay integers, ``SUM`` and ``AVG`` of integers keep their type."""
import datetime
import decimal
import math
import re
from typing import Callable, Optional

from .sql_parser import cast_type, expression_to_spark_sql, parse_expression
from .sql_typing import common_text_type
from .types import DataType, checked_data_type

__all__ = ['Expression', 'col', 'lit', 'call', 'call_sql', 'concat', 'concat_ws',
           'if_then_else', 'coalesce', 'and_', 'or_', 'not_', 'null_of', 'to_timestamp_ltz']

# Flink's function name -> Spark SQL text of its arguments (the name is what str() shows)
_TEMPLATES = {
    'plus': '({0} + {1})', 'minus': '({0} - {1})', 'times': '({0} * {1})',
    'power': 'POWER({0}, {1})', 'minusPrefix': '(- {0})',
    'equals': '({0} = {1})', 'notEquals': '({0} <> {1})', 'greaterThan': '({0} > {1})',
    'greaterThanOrEqual': '({0} >= {1})', 'lessThan': '({0} < {1})',
    'lessThanOrEqual': '({0} <= {1})', 'and': '({0} AND {1})', 'or': '({0} OR {1})',
    'not': '(NOT {0})', 'isNotTrue': '({0} IS NOT TRUE)', 'isTrue': '({0} IS TRUE)',
    'isFalse': '({0} IS FALSE)', 'isNotFalse': '({0} IS NOT FALSE)',
    'isNull': '({0} IS NULL)', 'isNotNull': '({0} IS NOT NULL)', 'like': '({0} LIKE {1})',
    'between': '({0} BETWEEN {1} AND {2})', 'notBetween': '({0} NOT BETWEEN {1} AND {2})',
    'ifThenElse': '(CASE WHEN {0} THEN {1} ELSE {2} END)',
    'upper': 'UPPER({0})', 'lower': 'LOWER({0})', 'charLength': 'CHAR_LENGTH({0})',
    'initCap': 'INITCAP({0})', 'trim': 'TRIM({0})', 'ltrim': 'LTRIM({0})',
    'rtrim': 'RTRIM({0})', 'replace': 'REPLACE({0}, {1}, {2})', 'repeat': 'REPEAT({0}, {1})',
    'reverse': 'REVERSE({0})', 'startsWith': 'STARTSWITH({0}, {1})',
    'endsWith': 'ENDSWITH({0}, {1})', 'md5': 'MD5({0})', 'abs': 'ABS({0})',
    'sqrt': 'SQRT({0})', 'exp': 'EXP({0})', 'ln': 'LN({0})', 'log10': 'LOG10({0})',
    'floor': 'FLOOR({0})', 'ceil': 'CEIL({0})', 'round': 'ROUND({0}, {1})',
    'sign': 'SIGN({0})', 'ifNull': 'COALESCE({0}, {1})',
    'sum': 'SUM({d}{0})', 'count': 'COUNT({d}{0})', 'avg': 'AVG({d}{0})',
    'max': 'MAX({d}{0})', 'min': 'MIN({d}{0})',
}
_VARARGS = {'concat': 'CONCAT', 'concatWs': 'CONCAT_WS', 'coalesce': 'COALESCE',
            'substring': 'SUBSTRING'}
AGGREGATES = frozenset({'sum', 'count', 'avg', 'max', 'min'})
_INTEGRAL = ('TINYINT', 'SMALLINT', 'INT', 'BIGINT')


def _binary(name: str, reflected: bool = False):
    def operator(self, other):
        return _op(name, other, self) if reflected else _op(name, self, other)
    return operator


def _unary(name: str):
    return lambda self: _op(name, self)


class Expression:
    """A column expression of the Table API: ``col('a') + 1``, ``col('b').upper_case``,
    ``col('c').sum.alias('total')``. Python values where an expression is expected are
    literals."""

    def __init__(self, name: str, *args):
        self._name = name     # 'field', 'literal', 'as', 'cast', 'sql', 'call', or a function
        self._args = args

    # --- operators (Python values on either side are literals) ----------------------------
    __add__, __radd__ = _binary('plus'), _binary('plus', True)
    __sub__, __rsub__ = _binary('minus'), _binary('minus', True)
    __mul__, __rmul__ = _binary('times'), _binary('times', True)
    __truediv__, __rtruediv__ = _binary('divide'), _binary('divide', True)
    __mod__, __rmod__ = _binary('mod'), _binary('mod', True)
    __pow__, __rpow__ = _binary('power'), _binary('power', True)
    __and__, __rand__ = _binary('and'), _binary('and', True)
    __or__, __ror__ = _binary('or'), _binary('or', True)
    __eq__, __ne__ = _binary('equals'), _binary('notEquals')
    __lt__, __gt__ = _binary('lessThan'), _binary('greaterThan')
    __le__, __ge__ = _binary('lessThanOrEqual'), _binary('greaterThanOrEqual')
    __neg__ = _unary('minusPrefix')
    __abs__ = _unary('abs')
    __invert__ = _unary('isNotTrue')  # as in Flink: ~NULL is TRUE

    __hash__ = object.__hash__

    # --- functions -----------------------------------------------------------------------
    def alias(self, name: str, *extra_names: str) -> 'Expression':
        """Names the expression's column: ``(col('a') + 1).alias('b')``."""
        return Expression('as', self, name, *extra_names)

    def cast(self, data_type: DataType) -> 'Expression':
        """The value as another type: ``col('a').cast(DataTypes.STRING())``."""
        return Expression('cast', self, checked_data_type('cast()', 'data_type', data_type))

    def like(self, pattern) -> 'Expression':
        """SQL LIKE: ``col('name').like('A%')``."""
        return _op('like', self, pattern)

    def between(self, lower_bound, upper_bound) -> 'Expression':
        """True if the value is within the bounds (inclusive)."""
        return _op('between', self, lower_bound, upper_bound)

    def not_between(self, lower_bound, upper_bound) -> 'Expression':
        """True if the value is not within the bounds (inclusive)."""
        return _op('notBetween', self, lower_bound, upper_bound)

    def then(self, if_true, if_false) -> 'Expression':
        """``if_true`` where this boolean is true, else ``if_false``."""
        return _op('ifThenElse', self, if_true, if_false)

    def if_null(self, null_replacement) -> 'Expression':
        """The value, or ``null_replacement`` where it is NULL."""
        return _op('ifNull', self, null_replacement)

    def in_(self, first_element_or_table, *remaining_elements) -> 'Expression':
        """True if the value equals one of the elements."""
        return _op('in', self, first_element_or_table, *remaining_elements)

    def concat(self, *others) -> 'Expression':
        """The strings joined; NULL if any is NULL."""
        return _op('concat', self, *others)

    def substring(self, begin_index, length=None) -> 'Expression':
        """The characters from ``begin_index`` (1-based), ``length`` of them if given."""
        return _op('substring', self, begin_index, *([] if length is None else [length]))

    substr = substring

    def trim(self, character=None) -> 'Expression':
        """The string without leading and trailing spaces."""
        if character is not None:
            raise NotImplementedError("trim(character) is not available here: use "
                                      "trim() for spaces, or regexp_replace")
        return _op('trim', self)

    def replace(self, search, replacement) -> 'Expression':
        """The string with each ``search`` replaced by ``replacement``."""
        return _op('replace', self, search, replacement)

    def repeat(self, n) -> 'Expression':
        """The string repeated ``n`` times."""
        return _op('repeat', self, n)

    def round(self, places) -> 'Expression':
        """The number rounded to ``places`` decimal places."""
        return _op('round', self, places)

    def starts_with(self, start_expr) -> 'Expression':
        """True if the string starts with ``start_expr``."""
        return _op('startsWith', self, start_expr)

    def ends_with(self, end_expr) -> 'Expression':
        """True if the string ends with ``end_expr``."""
        return _op('endsWith', self, end_expr)

    def ltrim(self) -> 'Expression':
        """The string without leading spaces."""
        return _op('ltrim', self)

    def rtrim(self) -> 'Expression':
        """The string without trailing spaces."""
        return _op('rtrim', self)

    def __str__(self):
        kind, args = self._name, self._args
        if kind == 'field':
            return args[0]
        if kind == 'literal':
            return repr(args[0]) if isinstance(args[0], str) else str(args[0])
        if kind == 'sql':
            return '[%s]' % args[0]
        if kind == 'cast':
            return 'cast(%s, %s)' % (args[0], args[1])
        if kind == 'as':
            return 'as(%s, %s)' % (args[0], ', '.join("'%s'" % n for n in args[1:]))
        name = args[0] if kind == 'call' else kind
        operands = args[1:] if kind == 'call' else args
        return '%s(%s)' % (getattr(name, '_name', name),
                           ', '.join(str(a) for a in operands if isinstance(a, Expression)))

    def __repr__(self):
        return str(self)


def _property(name: str, doc: str):
    return property(lambda self: _op(name, self), doc=doc)


for _attribute, _function, _doc in [
        ('upper_case', 'upper', "The string in upper case."),
        ('lower_case', 'lower', "The string in lower case."),
        ('char_length', 'charLength', "The number of characters of the string."),
        ('init_cap', 'initCap', "The string with each word's first letter in upper case."),
        ('reverse', 'reverse', "The string reversed."),
        ('md5', 'md5', "The MD5 hash of the string, as 32 hex digits."),
        ('is_null', 'isNull', "True if the value is NULL."),
        ('is_not_null', 'isNotNull', "True if the value is not NULL."),
        ('is_true', 'isTrue', "True if the boolean is true."),
        ('is_false', 'isFalse', "True if the boolean is false."),
        ('is_not_true', 'isNotTrue', "True if the boolean is false or NULL."),
        ('is_not_false', 'isNotFalse', "True if the boolean is true or NULL."),
        ('abs', 'abs', "The absolute value."), ('sqrt', 'sqrt', "The square root."),
        ('exp', 'exp', "e to the power of the value."), ('ln', 'ln', "The natural log."),
        ('log10', 'log10', "The base-10 log."), ('floor', 'floor', "Rounded down."),
        ('ceil', 'ceil', "Rounded up."), ('sign', 'sign', "-1, 0 or 1."),
        ('sum', 'sum', "The aggregate sum of the values (NULL for none)."),
        ('count', 'count', "The aggregate number of non-NULL values."),
        ('avg', 'avg', "The aggregate average (of integers: an integer, truncated)."),
        ('max', 'max', "The aggregate maximum."), ('min', 'min', "The aggregate minimum."),
        ('asc', 'asc', "Ascending order, in order_by."),
        ('desc', 'desc', "Descending order, in order_by.")]:
    setattr(Expression, _attribute, _property(_function, _doc))


# time interval literals (``lit(10).seconds``): their milliseconds per unit
_INTERVAL_UNITS = {'milli': 1, 'millis': 1, 'second': 1000, 'seconds': 1000,
                   'minute': 60_000, 'minutes': 60_000, 'hour': 3_600_000, 'hours': 3_600_000,
                   'day': 86_400_000, 'days': 86_400_000}
for _unit in _INTERVAL_UNITS:
    setattr(Expression, _unit, _property(_unit, f"An interval of this number of {_unit}."))
# the properties of a group window's alias (``col('w').start``): window TVF columns
WINDOW_PROPERTIES = {'start': 'window_start', 'end': 'window_end', 'rowtime': 'window_time',
                     'proctime': None}
for _property_name in WINDOW_PROPERTIES:
    setattr(Expression, _property_name, _property(
        _property_name, f"The {_property_name} of a group window, of its alias: "
                        f"col('w').{_property_name}."))


def interval_of(expression: Expression, owner: str) -> int:
    """The milliseconds of a time interval literal: ``lit(10).seconds`` is 10000."""
    if not isinstance(expression, Expression) or expression._name not in _INTERVAL_UNITS or \
            expression._args[0]._name != 'literal' or \
            not isinstance(expression._args[0]._args[0], int):
        raise ValueError(f"{owner}: expected a time interval, e.g. lit(10).seconds, got "
                         f"{expression!r} (row-count intervals are not available here)")
    return expression._args[0]._args[0] * _INTERVAL_UNITS[expression._name]


def _distinct(self) -> Expression:
    """The aggregate over distinct values: ``col('a').count.distinct``."""
    if self._name not in AGGREGATES:
        raise ValueError(f"distinct applies to an aggregate (col('a').count.distinct), "
                         f"not to {self}")
    return Expression(self._name, *self._args, 'distinct')


Expression.distinct = property(_distinct)


def _op(name: str, *operands) -> Expression:
    return Expression(name, *[_expression(o) for o in operands])


def _expression(value) -> Expression:
    return value if isinstance(value, Expression) else Expression('literal', value, None)


def col(name: str) -> Expression:
    """The column ``name`` of the table: ``tab.select(col('key'), col('value'))``."""
    return Expression('field', name)


def lit(v, data_type: DataType = None) -> Expression:
    """A literal: ``lit(12)`` is an INT, ``lit('abc')`` a string; with ``data_type``, a
    literal of that type (``lit(None, DataTypes.INT())``)."""
    return Expression('literal', v, data_type)


def null_of(data_type: DataType) -> Expression:
    """A NULL of ``data_type``."""
    return lit(None, data_type)


def call(f, *args) -> Expression:
    """A call of a function by name (a registered temporary function or a built-in
    function of Spark SQL) or of a Python user-defined function: ``call('add', col('a'),
    1)``."""
    return Expression('call', f, *[_expression(a) for a in args])


def call_sql(sql_expression: str) -> Expression:
    """A SQL expression (Spark SQL here): ``call_sql('a + 1')``."""
    return Expression('sql', sql_expression)


def to_timestamp_ltz(numeric_epoch_time, precision) -> Expression:
    """The instant (TIMESTAMP_LTZ) of an epoch time in seconds (``precision`` 0) or
    milliseconds (3): ``to_timestamp_ltz(col('ms'), 3)``."""
    if precision not in (0, 3):
        raise ValueError(f"to_timestamp_ltz(): precision must be 0 (seconds) or 3 "
                         f"(milliseconds), got {precision!r}")
    return _op('TO_TIMESTAMP_LTZ', numeric_epoch_time, precision)


def concat(first, *others) -> Expression:
    """The strings joined; NULL if any is NULL."""
    return _op('concat', first, *others)


def concat_ws(separator, first, *others) -> Expression:
    """The strings joined with ``separator``; NULLs are skipped."""
    return _op('concatWs', separator, first, *others)


def if_then_else(condition, if_true, if_false) -> Expression:
    """``if_true`` where ``condition`` holds, else ``if_false``."""
    return _op('ifThenElse', condition, if_true, if_false)


def coalesce(*args) -> Expression:
    """The first argument that is not NULL."""
    return _op('coalesce', *args)


def and_(predicate0, predicate1, *predicates) -> Expression:
    """True if all predicates are true."""
    result = _op('and', predicate0, predicate1)
    for predicate in predicates:
        result = _op('and', result, predicate)
    return result


def or_(predicate0, predicate1, *predicates) -> Expression:
    """True if any predicate is true."""
    result = _op('or', predicate0, predicate1)
    for predicate in predicates:
        result = _op('or', result, predicate)
    return result


def not_(expression) -> Expression:
    """The negation of a boolean."""
    return _op('not', expression)


# --- translation to Spark SQL ------------------------------------------------------------
def to_expression(field) -> Expression:
    """An Expression of a Table method's argument: a string is a column name, or a SQL
    expression with an optional ``AS name``."""
    if isinstance(field, str):
        text, alias = field.strip(), None
        aliased = re.fullmatch(r'(.+?)\s+(?i:as)\s+`?(\w+)`?', text, re.S)
        if aliased:
            text, alias = aliased.groups()
        expression = col(text.strip('`')) if re.fullmatch(r'`?\w+`?', text) else \
            call_sql(text)
        return expression.alias(alias) if alias else expression
    if not isinstance(field, Expression):
        raise TypeError(f"expected an Expression (col('a'), lit(1), ...), got {field!r}")
    return field


def column_name(expression: Expression) -> Optional[str]:
    """The name of the column an expression makes when it names none: a field keeps its
    name; anything else is unnamed (None)."""
    if expression._name == 'as':
        return expression._args[1]
    if expression._name == 'field':
        return expression._args[0]
    return None


def unaliased(expression: Expression) -> Expression:
    """The expression an ``.alias(...)`` names (or the expression itself)."""
    return expression._args[0] if expression._name == 'as' else expression


def declared_type(expression: Expression) -> Optional[DataType]:
    """The type Flink gives ``expression`` where Spark's differs only in what it shows (a
    CAST's target, a string literal's CHAR(n), TO_TIMESTAMP_LTZ's precision); else None."""
    from .types import CharType, DataTypes
    inner = unaliased(expression)
    kind, args = inner._name, inner._args
    if kind == 'cast':
        return args[1]
    if kind == 'sql':
        return cast_type(parse_expression(args[0]))
    if kind == 'literal' and isinstance(args[0], str) and args[1] is None:
        return CharType(max(1, len(args[0])), False)
    if kind == 'TO_TIMESTAMP_LTZ':
        return DataTypes.TIMESTAMP_LTZ(args[1]._args[0])
    if kind == 'ifThenElse':
        return common_text_type([declared_type(args[1]), declared_type(args[2])])
    return None


def is_aggregate(expression: Expression) -> bool:
    """Whether the expression is an aggregate (``.sum``, ``.count``, ...)."""
    return unaliased(expression)._name in AGGREGATES


def quote(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '`%s`' % name.replace('`', '``')


def to_sql(expression: Expression, type_of: Callable[[str], DataType],
           function_name: Callable) -> str:
    """Spark SQL text of ``expression``. ``type_of(sql)`` gives the column type of SQL
    text over the table's columns; ``function_name(udf)`` registers a Python function and
    gives its name."""
    def sql(e: Expression) -> str:
        kind, args = e._name, e._args
        if kind == 'field':
            return quote(args[0])
        if kind == 'literal':
            return _literal(*args)
        if kind == 'sql':
            return '(%s)' % expression_to_spark_sql(args[0])
        if kind == 'as':
            return sql(args[0])
        if kind == 'cast':
            return 'CAST(%s AS %s)' % (sql(args[0]), _spark_type_name(args[1]))
        if kind == 'call':
            name = args[0] if isinstance(args[0], str) else function_name(args[0])
            return '%s(%s)' % (name, ', '.join(sql(a) for a in args[1:]))
        if kind in _VARARGS:
            return '%s(%s)' % (_VARARGS[kind], ', '.join(sql(a) for a in args))
        if kind == 'in':
            return '(%s IN (%s))' % (sql(args[0]), ', '.join(sql(a) for a in args[1:]))
        if kind in ('asc', 'desc'):
            raise ValueError(f"{e}: asc and desc order the rows of order_by(), they are "
                             "not values")
        if kind == 'TO_TIMESTAMP_LTZ':
            unit = 'MILLIS' if args[1]._args[0] == 3 else 'SECONDS'
            return 'TIMESTAMP_%s(%s)' % (unit, sql(args[0]))
        if kind in ('divide', 'mod'):
            return _integral_division(kind, sql(args[0]), sql(args[1]), type_of)
        distinct = 'DISTINCT ' if args and isinstance(args[-1], str) else ''
        operands = [sql(a) for a in args if isinstance(a, Expression)]
        text = _TEMPLATES[kind].format(*operands, d=distinct)
        if kind in ('sum', 'avg'):
            # Flink keeps an integer (and FLOAT) input's type; Spark widens it
            input_type = type_of(operands[0])
            if input_type._root in _INTEGRAL + ('FLOAT',):
                text = 'CAST(%s AS %s)' % (text, _spark_type_name(input_type))
        return text
    return sql(expression)


def order_sql(expression: Expression, to_sql_text: Callable[[Expression], str]) -> str:
    """An ORDER BY key: ascending unless ``.desc``; NULL sorts as the largest value, as
    in Flink (last ascending, first descending)."""
    direction = 'ASC'
    if expression._name in ('asc', 'desc'):
        direction = expression._name.upper()
        expression = expression._args[0]
    return '%s %s NULLS %s' % (to_sql_text(expression), direction,
                               'LAST' if direction == 'ASC' else 'FIRST')


def _integral_division(kind: str, left: str, right: str, type_of) -> str:
    """``/`` and ``%``: between integers Flink keeps integers (``/`` truncates, the wider
    type; ``%`` the divisor's type); otherwise Spark's result."""
    left_type, right_type = type_of(left), type_of(right)
    if left_type._root not in _INTEGRAL or right_type._root not in _INTEGRAL:
        return '(%s %s %s)' % (left, '/' if kind == 'divide' else '%', right)
    if kind == 'mod':
        return 'CAST((%s %% %s) AS %s)' % (left, right, _spark_type_name(right_type))
    wider = max(left_type, right_type, key=lambda t: _INTEGRAL.index(t._root))
    return 'CAST((%s DIV %s) AS %s)' % (left, right, _spark_type_name(wider))


def _spark_type_name(data_type: DataType) -> str:
    from .data_frames import spark_type
    return spark_type(data_type).simpleString()


def _literal(value, data_type: Optional[DataType]) -> str:
    if data_type is not None:
        return 'CAST(%s AS %s)' % (_literal(value, None), _spark_type_name(data_type))
    if value is None:
        return 'NULL'
    if isinstance(value, bool):
        return 'TRUE' if value else 'FALSE'
    if isinstance(value, int):
        return str(value) if -2 ** 31 <= value < 2 ** 31 else '%dL' % value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return "CAST('%s' AS DOUBLE)" % ('NaN' if math.isnan(value) else
                                             ('-' if value < 0 else '') + 'Infinity')
        return repr(value) + 'D'
    if isinstance(value, decimal.Decimal):
        digits = value.as_tuple()
        scale = max(0, -digits.exponent)
        precision = max(len(digits.digits), scale + 1)
        return "CAST('%s' AS DECIMAL(%d, %d))" % (value, precision, scale)
    if isinstance(value, datetime.datetime):
        return "TIMESTAMP_NTZ '%s'" % value.isoformat(' ')
    if isinstance(value, datetime.date):
        return "DATE '%s'" % value.isoformat()
    if isinstance(value, str):
        return "'%s'" % value.replace('\\', '\\\\').replace("'", "\\'")
    raise TypeError(f"lit(): {value!r} of type {type(value).__name__} cannot be a literal "
                    "here (a bool, int, float, Decimal, str, date or datetime can)")
