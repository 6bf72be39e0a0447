"""The program of test_interval_join_sql.py: run with argument "pyflink" (PyFlink 2.3.0) or
"api" (this project); the same code after the imports. Interval joins in STREAMING mode of
two Schema-declared views with watermarks: BETWEEN and comparison bounds, SELECT *, extra
conditions, several and computed keys, no key, LEFT and FULL joins, to_data_stream."""
import sys

if sys.argv[1] == "pyflink":
    from pyflink.common.typeinfo import Types
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.table import DataTypes, Schema, StreamTableEnvironment
else:
    from api.common.typeinfo import Types
    from api.datastream import StreamExecutionEnvironment
    from api.table import DataTypes, Schema, StreamTableEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t_env = StreamTableEnvironment.create(env)
ORDERS = [(1, "eu", "pen", 10, "2024-01-01 00:00:01"), (2, "us", "ink", 4, "2024-01-01 00:00:02"),
          (1, "us", "cap", 7, "2024-01-01 00:00:16"), (3, "eu", "mug", 9, "2024-01-01 00:00:20"),
          (2, "us", "pad", 3, "2024-01-01 00:00:30")]
SHIPMENTS = [(1, "eu", "truck", 2, "2024-01-01 00:00:04"),
             (2, "us", "van", 5, "2024-01-01 00:00:09"),
             (1, "us", "bike", 1, "2024-01-01 00:00:21"),
             (3, "us", "ship", 1, "2024-01-01 00:00:22"),
             (2, "us", "cart", 1, "2024-01-01 00:00:28"),
             (1, "eu", "drone", 3, "2024-01-01 00:00:40")]


def view(name, rows, columns, types):
    stream = env.from_collection(rows, type_info=Types.ROW_NAMED(columns + ['t'], types))
    builder = Schema.new_builder()
    for column, data_type in zip(columns, [DataTypes.INT(), DataTypes.STRING(),
                                           DataTypes.STRING(), DataTypes.INT()]):
        builder = builder.column(column, data_type)
    t_env.create_temporary_view(name, stream, builder.column('t', DataTypes.STRING())
                                .column_by_expression('ts', "CAST(t AS TIMESTAMP(3))")
                                .watermark('ts', "ts - INTERVAL '1' SECOND").build())


TYPES = [Types.INT(), Types.STRING(), Types.STRING(), Types.INT(), Types.STRING()]
view('orders', ORDERS, ['id', 'region', 'item', 'amount'], TYPES)
view('shipments', SHIPMENTS, ['id', 'region', 'carrier', 'fee'], TYPES)


def show(sql):
    print(sql)
    table = t_env.sql_query(sql)
    table.print_schema()
    table.execute().print()


show("SELECT o.id, o.item, s.carrier, s.ts FROM orders o, shipments s "
     "WHERE o.id = s.id AND s.ts BETWEEN o.ts AND o.ts + INTERVAL '5' SECOND")
show("SELECT * FROM orders o JOIN shipments s ON o.id = s.id "
     "AND o.ts >= s.ts - INTERVAL '10' SECOND AND o.ts < s.ts")
show("SELECT o.item, s.carrier, o.amount - s.fee AS net, o.ts AS ots, s.ts AS sts "
     "FROM orders o JOIN shipments s ON o.id = s.id AND o.region = s.region "
     "WHERE o.amount > s.fee AND s.ts > o.ts - INTERVAL '2' SECOND "
     "AND s.ts <= o.ts + INTERVAL '8' SECOND")
show("SELECT orders.id, carrier, shipments.ts FROM shipments, orders "
     "WHERE shipments.id = orders.id AND orders.ts BETWEEN shipments.ts - INTERVAL '10' SECOND "
     "AND shipments.ts + INTERVAL '3' SECOND AND carrier <> 'van'")
show("SELECT o.id, o.item, s.carrier FROM orders o LEFT JOIN shipments s ON o.id = s.id "
     "AND s.ts BETWEEN o.ts AND o.ts + INTERVAL '5' SECOND")
show("SELECT o.id, o.item, s.carrier, s.ts, o.ts FROM orders o FULL JOIN shipments s "
     "ON o.id = s.id AND s.ts BETWEEN o.ts AND o.ts + INTERVAL '5' SECOND WHERE o.id <> 3")
show("SELECT o.id + s.fee AS x, s.carrier FROM orders o, shipments s WHERE o.id + 1 = s.fee "
     "AND s.ts BETWEEN o.ts - INTERVAL '1' MINUTE AND o.ts + INTERVAL '0.5' SECOND")
show("SELECT o.item, s.carrier FROM orders o, shipments s "
     "WHERE s.ts BETWEEN o.ts AND o.ts + INTERVAL '5' SECOND")
t_env.to_data_stream(t_env.sql_query(
    "SELECT o.item, s.carrier, s.ts FROM orders o, shipments s WHERE o.id = s.id "
    "AND s.ts BETWEEN o.ts AND o.ts + INTERVAL '5' SECOND")).print()
env.execute()
