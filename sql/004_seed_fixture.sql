-- 004_seed_fixture: the tables of the seed fixture (tests/fixtures/,
-- docs/FIXTURE.md), in their own database so the fixture never touches the
-- service's tables. The seed article's DDL (seed lines 3 and 17), renamed
-- with a seed_ prefix. A TEST FIXTURE's schema: nothing else uses it.

CREATE DATABASE IF NOT EXISTS idempay_seed CHARACTER SET utf8mb4;

-- seed line 3, as written: order_no unique, status tinyint, amount decimal.
CREATE TABLE IF NOT EXISTS idempay_seed.seed_payment_order (
  `id` bigint NOT NULL AUTO_INCREMENT COMMENT '主键ID',
  `order_no` varchar(64) NOT NULL COMMENT '唯一订单号（幂等标识）',
  `user_id` bigint NOT NULL COMMENT '用户ID',
  `amount` decimal(10,2) NOT NULL COMMENT '支付金额',
  `status` tinyint NOT NULL COMMENT '支付状态：0=待支付，1=支付中，2=已支付，3=支付失败',
  `create_time` datetime NOT NULL DEFAULT CURRENT_TIMESTAMP COMMENT '创建时间',
  `update_time` datetime NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP COMMENT '更新时间',
  PRIMARY KEY (`id`),
  UNIQUE KEY `uk_order_no` (`order_no`) COMMENT '订单号唯一索引（确保幂等）'
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT '支付订单表';

-- seed line 17, with ONE deliberate change: the article's
-- UNIQUE KEY uk_third_party_no is a plain index here, so the callback's
-- check-then-insert race really leaves duplicate records (with the unique
-- key the losing copies would get an exception and answer FAIL instead).
CREATE TABLE IF NOT EXISTS idempay_seed.seed_payment_callback_record (
  `id` bigint NOT NULL AUTO_INCREMENT COMMENT '主键ID',
  `third_party_no` varchar(64) NOT NULL COMMENT '第三方支付流水号（如微信transaction_id）',
  `order_no` varchar(64) NOT NULL COMMENT '关联订单号',
  `callback_time` datetime NOT NULL DEFAULT CURRENT_TIMESTAMP COMMENT '回调时间',
  PRIMARY KEY (`id`),
  KEY `idx_third_party_no` (`third_party_no`),
  KEY `idx_order_no` (`order_no`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT '支付回调记录表';
