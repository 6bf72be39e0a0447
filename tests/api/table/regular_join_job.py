"""The program of test_regular_join.py: run with argument "pyflink" (PyFlink 2.3.0) or "api"
(this project); the same code after the imports. Regular joins of two append-only streams
in STREAMING mode, of the Table API (join with a predicate, or filtered after; outer joins)
and of SQL: their schema and changelog (+I, and -D of outer joins)."""
import sys

if sys.argv[1] == "pyflink":
    from pyflink.common.typeinfo import Types
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.table import DataTypes, Schema, StreamTableEnvironment
    from pyflink.table.expressions import col
else:
    from api.common.typeinfo import Types
    from api.datastream import StreamExecutionEnvironment
    from api.table import DataTypes, Schema, StreamTableEnvironment
    from api.table.expressions import col

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t_env = StreamTableEnvironment.create(env)
orders = env.from_collection(
    [(1, "ann", 10, "2024-01-01 00:00:01"), (2, "bob", 5, "2024-01-01 00:00:02"),
     (3, "ann", 7, "2024-01-01 00:00:03"), (4, "cy", 1, "2024-01-01 00:00:04"),
     (5, None, 2, "2024-01-01 00:00:05"), (6, "ann", 10, "2024-01-01 00:00:06")],
    type_info=Types.ROW_NAMED(['oid', 'customer', 'amount', 't'],
                              [Types.INT(), Types.STRING(), Types.INT(), Types.STRING()]))
customers = env.from_collection(
    [("ann", "Paris"), ("bob", "Rome"), ("ann", "Oslo"), ("dan", "Bern"), (None, "Nowhere"),
     ("ann", "Paris")],
    type_info=Types.ROW_NAMED(['name', 'city'], [Types.STRING(), Types.STRING()]))
o = t_env.from_data_stream(orders, Schema.new_builder()
                           .column('oid', DataTypes.INT()).column('customer', DataTypes.STRING())
                           .column('amount', DataTypes.INT()).column('t', DataTypes.STRING())
                           .column_by_expression('ts', "CAST(t AS TIMESTAMP(3))")
                           .watermark('ts', "ts - INTERVAL '1' SECOND").build())
c = t_env.from_data_stream(customers)
t_env.create_temporary_view('orders', o)
t_env.create_temporary_view('customers', c)


def show(title, table):
    print(title)
    table.print_schema()
    table.execute().print()


show("join", o.join(c, col('customer') == col('name'))
     .select(col('oid'), col('name'), col('city'), col('amount'), col('ts')))
show("join, where", o.join(c).where((col('customer') == col('name')) & (col('amount') > 5)))
show("join, two conditions", o.join(c, (col('customer') == col('name')) & (col('amount') > 5)))
show("SQL join", t_env.sql_query(
    "SELECT o.oid, c.city, o.amount * 2 AS a2 FROM orders o JOIN customers c "
    "ON o.customer = c.name WHERE o.amount > 1"))
show("SQL join, *", t_env.sql_query(
    "SELECT * FROM orders JOIN customers ON customer = name AND amount <> 5"))
show("SQL join, no keys", t_env.sql_query(
    "SELECT oid, city FROM orders, customers WHERE amount > 9 AND city LIKE 'P%'"))
show("left outer join", o.left_outer_join(c, col('customer') == col('name')))
show("full outer join", o.select(col('oid'), col('customer'))
     .full_outer_join(c, (col('customer') == col('name')) & (col('city') != 'Oslo')))
show("SQL right join", t_env.sql_query(
    "SELECT o.oid, c.name, c.city FROM orders o RIGHT JOIN customers c "
    "ON o.customer = c.name AND o.amount > 5 WHERE c.city <> 'Rome'"))
