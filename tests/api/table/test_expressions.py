"""The expression DSL: expressions print as PyFlink 2.3.0 prints them (``str()``), and
translate to the Spark SQL that keeps Flink's result types (no Spark: column types come
from a table of them)."""
import datetime
import decimal
import re

import pytest

from api.table import DataTypes
from api.table.expressions import (and_, call, call_sql, coalesce, col, concat, if_then_else,
                                   lit, not_, order_sql, to_expression, to_sql,
                                   to_timestamp_ltz)

COLUMN_TYPES = {'`i`': DataTypes.INT(), '`l`': DataTypes.BIGINT(),
                '`d`': DataTypes.DOUBLE(), '`s`': DataTypes.STRING(),
                '`f`': DataTypes.FLOAT()}


def _type_of(sql: str):
    if re.fullmatch(r'-?\d+', sql):
        return DataTypes.INT(False)
    return COLUMN_TYPES[sql]


def sql(expression) -> str:
    return to_sql(expression, _type_of, lambda function: '__udf_' + function._name)


def test_expressions_print_as_pyflink_prints_them():
    # recorded from PyFlink 2.3.0's str(expression)
    assert str(col('v') * 2 + 1) == 'plus(times(v, 2), 1)'
    assert str(col('a').sum.alias('s')) == "as(sum(a), 's')"
    assert str(col('w').upper_case) == 'upper(w)'
    assert str(col('a') == 'x') == "equals(a, 'x')"
    assert str(col('a').cast(DataTypes.STRING())) == 'cast(a, STRING)'
    assert str((col('a') > 1) & col('b').is_null) == 'and(greaterThan(a, 1), isNull(b))'
    assert str(to_timestamp_ltz(col('ms'), 3)) == 'TO_TIMESTAMP_LTZ(ms, 3)'
    assert str(call_sql('id + 1')) == '[id + 1]'


def test_operators_and_functions_translate_to_spark_sql():
    assert sql((col('i') + 1) * col('l') - 2) == '(((`i` + 1) * `l`) - 2)'
    assert sql(2 - col('i')) == '(2 - `i`)'  # a Python value on the left is a literal
    assert sql(~(col('i') >= 3) | (col('s') != 'x')) == \
        "(((`i` >= 3) IS NOT TRUE) OR (`s` <> 'x'))"
    assert sql(and_(col('i') < 1, col('i') <= 2, not_(col('i') > 3))) == \
        '(((`i` < 1) AND (`i` <= 2)) AND (NOT (`i` > 3)))'
    assert sql(col('s').like('a%')) == "(`s` LIKE 'a%')"
    assert sql(col('i').between(1, 5)) == '(`i` BETWEEN 1 AND 5)'
    assert sql(if_then_else(col('i') > 1, 'x', 'y')) == \
        "(CASE WHEN (`i` > 1) THEN 'x' ELSE 'y' END)"
    assert sql(concat(col('s'), '!')) == "CONCAT(`s`, '!')"
    assert sql(coalesce(col('s'), 'none')) == "COALESCE(`s`, 'none')"
    assert sql(col('i').in_(1, 2)) == '(`i` IN (1, 2))'
    assert sql(col('s').substring(2, 3).upper_case.char_length) == \
        'CHAR_LENGTH(UPPER(SUBSTRING(`s`, 2, 3)))'
    assert sql(col('i').cast(DataTypes.DECIMAL(10, 2)).alias('x')) == \
        'CAST(`i` AS decimal(10,2))'
    assert sql(to_timestamp_ltz(col('l'), 0)) == 'TIMESTAMP_SECONDS(`l`)'
    assert sql(call('my_function', col('i'), 1)) == 'my_function(`i`, 1)'
    assert sql(to_expression('i AS j')) == '`i`'  # strings: a name, or SQL
    assert str(to_expression('i + 1 as j')) == "as([i + 1], 'j')"


def test_integers_stay_integers_as_in_flink():
    # / between integers truncates, in the wider type; % has the divisor's type
    assert sql(col('l') / col('i')) == 'CAST((`l` DIV `i`) AS bigint)'
    assert sql(col('i') / 2) == 'CAST((`i` DIV 2) AS int)'
    assert sql(col('d') / 2) == '(`d` / 2)'
    assert sql(col('l') % 3) == 'CAST((`l` % 3) AS int)'
    # SUM and AVG of integers (and FLOAT) keep the type; of DOUBLE they are Spark's
    assert sql(col('i').sum) == 'CAST(SUM(`i`) AS int)'
    assert sql(col('f').avg) == 'CAST(AVG(`f`) AS float)'
    assert sql(col('d').avg) == 'AVG(`d`)'
    assert sql(col('s').count.distinct) == 'COUNT(DISTINCT `s`)'
    with pytest.raises(ValueError, match="distinct applies to an aggregate"):
        col('s').upper_case.distinct


def test_literals():
    assert sql(lit(2 ** 40)) == '1099511627776L'
    assert sql(lit(0.1)) == '0.1D'
    assert sql(lit(float('-inf'))) == "CAST('-Infinity' AS DOUBLE)"
    assert sql(lit(decimal.Decimal('12.50'))) == "CAST('12.50' AS DECIMAL(4, 2))"
    assert sql(lit("it's \\ here")) == "'it\\'s \\\\ here'"
    assert sql(lit(datetime.date(2024, 2, 29))) == "DATE '2024-02-29'"
    assert sql(lit(None, DataTypes.INT())) == 'CAST(NULL AS int)'
    with pytest.raises(TypeError, match="cannot be a literal"):
        sql(lit(object()))
    with pytest.raises(ValueError, match="precision must be 0"):
        to_timestamp_ltz(col('l'), 6)


def test_order_keys_sort_null_as_the_largest_value():
    assert order_sql(col('i'), sql) == '`i` ASC NULLS LAST'
    assert order_sql(col('i').desc, sql) == '`i` DESC NULLS FIRST'
    with pytest.raises(ValueError, match="asc and desc order the rows of order_by"):
        sql(col('i').desc + 1)
